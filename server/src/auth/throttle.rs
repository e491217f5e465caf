//! Sign-in throttling: after `max_failures` wrong passwords for one email
//! in a row, that email is locked for `lockout`, doubling with each
//! further failure up to `max_lockout`; while locked, every attempt is
//! refused without looking at the password (the probe tried 20 wrong
//! passwords in half a second, then the right one worked). Keyed by the
//! email as typed (normalized), whether or not such a user exists, so a
//! lockout tells nothing about who has an account. A success clears the
//! count; failures older than `forget_after` are forgotten.
//!
//! State is in memory on each server: with several servers a guesser gets
//! `max_failures` per server before each locks. At most `max_entries`
//! emails are tracked (the oldest are forgotten first), so a flood of
//! made-up emails can't grow the server.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug)]
pub struct ThrottleConfig {
    pub max_failures: u32,
    pub lockout: Duration,
    pub max_lockout: Duration,
    pub forget_after: Duration,
    pub max_entries: usize,
}

impl Default for ThrottleConfig {
    fn default() -> Self {
        ThrottleConfig {
            max_failures: crate::config::defaults::LOGIN_MAX_FAILURES,
            lockout: Duration::from_secs(crate::config::defaults::LOGIN_LOCKOUT_SECS),
            max_lockout: Duration::from_secs(900),
            forget_after: Duration::from_secs(900),
            max_entries: 100_000,
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Record {
    failures: u32,
    last: Instant,
    locked_until: Option<Instant>,
}

#[derive(Debug)]
pub struct LoginThrottle {
    config: ThrottleConfig,
    records: Mutex<HashMap<String, Record>>,
}

impl LoginThrottle {
    pub fn new(config: ThrottleConfig) -> Self {
        LoginThrottle {
            config,
            records: Mutex::new(HashMap::new()),
        }
    }

    /// Whether `email` may try now; if not, how long until it may.
    pub fn check(&self, email: &str, now: Instant) -> Result<(), Duration> {
        let records = self.records.lock().expect("throttle");
        match records.get(email).and_then(|r| r.locked_until) {
            Some(until) if until > now => Err(until - now),
            _ => Ok(()),
        }
    }

    /// A wrong password (or an unknown or disabled user) for `email`.
    pub fn failed(&self, email: &str, now: Instant) {
        let c = self.config;
        if c.max_failures == 0 {
            return;
        }
        let mut records = self.records.lock().expect("throttle");
        if records.len() >= c.max_entries && !records.contains_key(email) {
            // Forget what is stale first, then the oldest.
            records.retain(|_, r| now.duration_since(r.last) < c.forget_after);
            if records.len() >= c.max_entries
                && let Some(oldest) = records
                    .iter()
                    .min_by_key(|(_, r)| r.last)
                    .map(|(k, _)| k.clone())
            {
                records.remove(&oldest);
            }
        }
        let r = records.entry(email.to_string()).or_insert(Record {
            failures: 0,
            last: now,
            locked_until: None,
        });
        if now.duration_since(r.last) >= c.forget_after {
            r.failures = 0;
        }
        r.failures += 1;
        r.last = now;
        if r.failures >= c.max_failures {
            let doublings = (r.failures - c.max_failures).min(16);
            let lock = c.lockout.saturating_mul(1 << doublings).min(c.max_lockout);
            r.locked_until = Some(now + lock);
        }
    }

    /// A successful sign-in: the count starts again.
    pub fn succeeded(&self, email: &str) {
        self.records.lock().expect("throttle").remove(email);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t() -> LoginThrottle {
        LoginThrottle::new(ThrottleConfig {
            max_failures: 3,
            lockout: Duration::from_secs(10),
            max_lockout: Duration::from_secs(35),
            forget_after: Duration::from_secs(100),
            max_entries: 4,
        })
    }

    #[test]
    fn locks_after_the_failures_and_doubles_up_to_the_cap() {
        let th = t();
        let t0 = Instant::now();
        for i in 0..2 {
            th.failed("a@x", t0 + Duration::from_secs(i));
            assert!(th.check("a@x", t0 + Duration::from_secs(i)).is_ok());
        }
        th.failed("a@x", t0 + Duration::from_secs(2));
        assert_eq!(
            th.check("a@x", t0 + Duration::from_secs(2)),
            Err(Duration::from_secs(10))
        );
        // Other emails are not touched.
        assert!(th.check("b@x", t0).is_ok());
        // After the lock, the next failure locks for twice as long, then
        // the cap.
        let t1 = t0 + Duration::from_secs(13);
        assert!(th.check("a@x", t1).is_ok());
        th.failed("a@x", t1);
        assert_eq!(th.check("a@x", t1), Err(Duration::from_secs(20)));
        let t2 = t1 + Duration::from_secs(21);
        th.failed("a@x", t2);
        assert_eq!(th.check("a@x", t2), Err(Duration::from_secs(35)));
        // A success clears it.
        th.succeeded("a@x");
        assert!(th.check("a@x", t2).is_ok());
    }

    #[test]
    fn old_failures_are_forgotten_and_entries_bounded() {
        let th = t();
        let t0 = Instant::now();
        th.failed("a@x", t0);
        th.failed("a@x", t0);
        th.failed("a@x", t0 + Duration::from_secs(200));
        assert!(th.check("a@x", t0 + Duration::from_secs(200)).is_ok());
        for i in 0..10 {
            th.failed(&format!("{i}@x"), t0 + Duration::from_secs(300 + i));
        }
        assert!(th.records.lock().unwrap().len() <= 4);
    }
}
