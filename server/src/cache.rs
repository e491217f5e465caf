//! Short-lived caches of what the hot path reads from the database on every
//! call: the principal behind a credential (auth) and a running sandbox's
//! record (GetSandbox, and the route of process, PTY and file calls). Each
//! read was 0.1-0.3 ms of a 2 ms exec, and most of a GetSandbox. An answer
//! read in the last `ttl` (default 2 s, flags `--auth-cache-ms` and
//! `--sandbox-cache-ms`, 0 turns one off) is reused.
//!
//! What keeps them right: any change this server makes clears or forgets
//! the affected entries at once (users and keys in domain::tenants, every
//! sandbox change in domain::sandboxes::publish); a generation number stops
//! a lookup that read the database before such a change from putting its
//! stale answer back; entries never outlive an expiry the caller gives (a
//! credential's own); failures are never cached. With several servers on
//! one PostgreSQL, a change made on another server is forgotten here when
//! its notification arrives (peers.rs), and within `ttl` at worst (a
//! stale route is still refused by the worker, which fences each call by
//! the sandbox's generation and state); on one server (the embedded
//! default) every change goes through it, so nothing is stale.

use crate::db::now_ms;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Most entries kept; past it, expired ones go, then all of them.
const MAX_ENTRIES: usize = 10_000;

struct Entry<V> {
    value: V,
    until: Instant,
    /// A hard expiry of the value itself, ms since the epoch.
    expires_ms: Option<i64>,
}

struct Inner<V> {
    generation: u64,
    entries: HashMap<String, Entry<V>>,
}

pub struct ShortCache<V> {
    ttl: Duration,
    inner: Mutex<Inner<V>>,
}

impl<V: Clone> ShortCache<V> {
    /// A zero `ttl` turns the cache off.
    pub fn new(ttl: Duration) -> Self {
        ShortCache {
            ttl,
            inner: Mutex::new(Inner {
                generation: 0,
                entries: HashMap::new(),
            }),
        }
    }

    pub fn get(&self, key: &str) -> Option<V> {
        if self.ttl.is_zero() {
            return None;
        }
        let mut inner = self.inner.lock().expect("cache");
        let e = inner.entries.get(key)?;
        if e.until > Instant::now() && e.expires_ms.is_none_or(|x| now_ms() < x) {
            return Some(e.value.clone());
        }
        inner.entries.remove(key);
        None
    }

    /// Read before the database is: `put` drops an answer from an older one.
    pub fn generation(&self) -> u64 {
        self.inner.lock().expect("cache").generation
    }

    pub fn put(&self, key: String, generation: u64, value: &V, expires_ms: Option<i64>) {
        if self.ttl.is_zero() {
            return;
        }
        let mut inner = self.inner.lock().expect("cache");
        if inner.generation != generation {
            return;
        }
        let now = Instant::now();
        if inner.entries.len() >= MAX_ENTRIES {
            inner.entries.retain(|_, e| e.until > now);
            if inner.entries.len() >= MAX_ENTRIES {
                inner.entries.clear();
            }
        }
        inner.entries.insert(
            key,
            Entry {
                value: value.clone(),
                until: now + self.ttl,
                expires_ms,
            },
        );
    }

    /// Forgets one entry (and refuses answers read before now).
    pub fn forget(&self, key: &str) {
        let mut inner = self.inner.lock().expect("cache");
        inner.generation += 1;
        inner.entries.remove(key);
    }

    /// Forgets every entry (and refuses answers read before now).
    pub fn clear(&self) {
        let mut inner = self.inner.lock().expect("cache");
        inner.generation += 1;
        inner.entries.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> String {
        "usr_a".to_string()
    }

    #[test]
    fn hit_until_ttl_or_expiry() {
        let c = ShortCache::new(Duration::from_millis(50));
        c.put("a".into(), c.generation(), &p(), None);
        c.put("b".into(), c.generation(), &p(), Some(now_ms() - 1));
        assert_eq!(c.get("a").unwrap(), "usr_a");
        assert!(c.get("b").is_none(), "past the credential's expiry");
        assert!(c.get("x").is_none());
        std::thread::sleep(Duration::from_millis(60));
        assert!(c.get("a").is_none(), "past the ttl");
    }

    #[test]
    fn clear_forgets_and_refuses_older_answers() {
        let c = ShortCache::new(Duration::from_secs(60));
        let before = c.generation();
        c.put("a".into(), before, &p(), None);
        c.clear();
        assert!(c.get("a").is_none());
        // A lookup that read the database before the change.
        c.put("a".into(), before, &p(), None);
        assert!(c.get("a").is_none());
        c.put("a".into(), c.generation(), &p(), None);
        assert!(c.get("a").is_some());
    }

    #[test]
    fn forget_drops_one_and_refuses_older_answers() {
        let c = ShortCache::new(Duration::from_secs(60));
        let before = c.generation();
        c.put("a".into(), before, &p(), None);
        c.put("b".into(), before, &p(), None);
        c.forget("a");
        assert!(c.get("a").is_none());
        assert!(c.get("b").is_some());
        c.put("a".into(), before, &p(), None);
        assert!(c.get("a").is_none());
    }

    #[test]
    fn zero_ttl_is_off() {
        let c = ShortCache::new(Duration::ZERO);
        c.put("a".into(), c.generation(), &p(), None);
        assert!(c.get("a").is_none());
    }
}
