//! A credential is checked before any body is read. The edges that are
//! clients of the server (the REST gateway, E2B's two listeners) hold no
//! keys, so they ask the server (any call: every answer but
//! "unauthenticated" means it took the credential) and remember a good
//! answer for a while, so a client's next calls cost nothing. The real
//! check is still the server's, on the call itself: this one only decides
//! whether a body is worth reading, so a credential revoked a moment ago
//! gets at most that far. Bad answers are not remembered.

use std::collections::HashMap;
use std::future::Future;
use std::hash::BuildHasher;
use std::sync::Mutex;
use std::time::Duration;
use tokio::time::Instant;

/// Credentials the server took recently, by a keyed hash of each (the
/// key is this process's own, so collisions can't be aimed at).
#[derive(Debug)]
pub struct CheckedCredentials {
    ttl: Duration,
    cap: usize,
    keys: std::collections::hash_map::RandomState,
    taken: Mutex<HashMap<u64, Instant>>,
}

impl Default for CheckedCredentials {
    /// A minute, for at most 10,000 credentials.
    fn default() -> Self {
        CheckedCredentials::new(Duration::from_secs(60), 10_000)
    }
}

impl CheckedCredentials {
    pub fn new(ttl: Duration, cap: usize) -> CheckedCredentials {
        CheckedCredentials {
            ttl,
            cap,
            keys: Default::default(),
            taken: Mutex::default(),
        }
    }

    /// Whether the server takes `credential`: remembered, or `ask` it
    /// (`Ok(true)`: taken, `Ok(false)`: refused, `Err`: no answer, which
    /// the caller refuses the request with: fail closed).
    pub async fn check<E, F>(&self, credential: &str, ask: impl FnOnce() -> F) -> Result<bool, E>
    where
        F: Future<Output = Result<bool, E>>,
    {
        let key = self.keys.hash_one(credential);
        let now = Instant::now();
        if self
            .taken
            .lock()
            .expect("checked credentials")
            .get(&key)
            .is_some_and(|until| *until > now)
        {
            return Ok(true);
        }
        let taken = ask().await?;
        if taken {
            let mut m = self.taken.lock().expect("checked credentials");
            if m.len() >= self.cap {
                m.retain(|_, until| *until > now);
                if m.len() >= self.cap {
                    m.clear();
                }
            }
            m.insert(key, now + self.ttl);
        }
        Ok(taken)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test(start_paused = true)]
    async fn a_taken_credential_is_remembered_a_refused_one_is_not() {
        let c = CheckedCredentials::new(Duration::from_secs(60), 2);
        let asked = AtomicUsize::new(0);
        let ask = |answer: bool| {
            asked.fetch_add(1, Ordering::Relaxed);
            async move { Ok::<_, ()>(answer) }
        };
        assert_eq!(c.check("good", || ask(true)).await, Ok(true));
        assert_eq!(c.check("good", || ask(false)).await, Ok(true));
        assert_eq!(c.check("bad", || ask(false)).await, Ok(false));
        assert_eq!(c.check("bad", || ask(false)).await, Ok(false));
        assert_eq!(asked.load(Ordering::Relaxed), 3);
        // No answer: an error, not remembered.
        assert_eq!(
            c.check("x", || async { Err::<bool, _>("down") }).await,
            Err("down")
        );
        // Forgotten after the ttl.
        tokio::time::advance(Duration::from_secs(61)).await;
        assert_eq!(c.check("good", || ask(false)).await, Ok(false));
        // Never more than the cap.
        for k in ["a", "b", "c", "d"] {
            assert_eq!(c.check(k, || ask(true)).await, Ok(true));
        }
        assert!(c.taken.lock().unwrap().len() <= 2);
    }
}
