//! The prewarm pool: sandboxes built ahead of demand — root mounted, agent
//! answering, network attached — so that a create of the same
//! image and resources only renames one and configures it. This module is
//! the bookkeeping (which pools exist, what is ready, what to build next,
//! the counters); `host.rs` builds, claims and removes the sandboxes.
//!
//! Pools form on demand: a create that finds no pooled sandbox of its
//! shape registers that shape (at most `max_pools`, least recently used
//! out), and the background refill builds up to `size` of it, one at a
//! time, at most one per `refill_interval`, and never while a live create
//! is running — so the pool cannot starve the work it exists for.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use talon_proto::talon::worker::v1 as wpb;

/// What makes two sandboxes interchangeable before their claim: the image,
/// the resources (cgroup limits are set at build) and the isolation level
/// (each level has its own pools). Env, secrets,
/// network policy and hostname are applied at the claim.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Shape {
    pub image: String,
    pub cpu_millis: i64,
    pub memory_mib: i64,
    pub disk_mib: i64,
    pub max_pids: i64,
    pub runtime: String,
    #[serde(default)]
    pub isolation: crate::runtime::Isolation,
}

impl Shape {
    pub fn of(spec: &wpb::SandboxSpec) -> Shape {
        let r = spec.resources.unwrap_or_default();
        Shape {
            image: if spec.image.is_empty() {
                talon_core::image::HOST_IMAGE.into()
            } else {
                spec.image.clone()
            },
            cpu_millis: r.cpu_millis,
            memory_mib: r.memory_mib,
            disk_mib: r.disk_mib,
            max_pids: r.max_pids,
            runtime: spec.runtime.clone(),
            // A level no worker runs never gets here: create checks it
            // before it looks in the pool.
            isolation: crate::runtime::Isolation::from_proto(spec.isolation).unwrap_or_default(),
        }
    }

    /// The spec a pooled sandbox of this shape is built from: no env, no
    /// secrets, and the default egress policy (open), so that the common
    /// claim changes no rule. Nothing runs in it but the agent until it
    /// is claimed, and a claim applies the sandbox's own policy first.
    pub fn spec(&self) -> wpb::SandboxSpec {
        wpb::SandboxSpec {
            image: self.image.clone(),
            resources: Some(talon_proto::v1::Resources {
                cpu_millis: self.cpu_millis,
                memory_mib: self.memory_mib,
                disk_mib: self.disk_mib,
                max_pids: self.max_pids,
            }),
            runtime: self.runtime.clone(),
            isolation: self.isolation.to_proto() as i32,
            network_policy: Some(talon_proto::v1::NetworkPolicy {
                mode: talon_proto::v1::EgressMode::Open as i32,
                ..Default::default()
            }),
            ..Default::default()
        }
    }
}

/// Pool limits; each is a flag of `talon worker` / `talon up`.
#[derive(Clone, Debug)]
pub struct PoolOptions {
    /// Ready sandboxes kept per shape; 0 turns the pool off.
    pub size: usize,
    /// Shapes pooled at once.
    pub max_pools: usize,
    /// Least time between two pooled builds.
    pub refill_interval: Duration,
    /// A pool no create has used for this long is emptied.
    pub idle: Duration,
}

impl Default for PoolOptions {
    fn default() -> Self {
        PoolOptions {
            size: 2,
            max_pools: 4,
            refill_interval: Duration::from_millis(200),
            idle: Duration::from_secs(600),
        }
    }
}

struct Entry {
    ready: VecDeque<String>,
    building: usize,
    target: usize,
    used: Instant,
}

pub struct Pool {
    opts: PoolOptions,
    pools: Mutex<HashMap<Shape, Entry>>,
    /// Creates running now; the refill waits while there are any.
    live: AtomicUsize,
    hits: AtomicI64,
    misses: AtomicI64,
    reclaimed: Mutex<BTreeMap<String, i64>>,
    /// Woken when there may be something to build or remove.
    pub wake: tokio::sync::Notify,
    /// Woken when the figures change (the worker sends a heartbeat).
    pub changed: tokio::sync::Notify,
}

/// Held for the length of a live create.
pub struct LiveCreate<'a>(&'a Pool);

impl Drop for LiveCreate<'_> {
    fn drop(&mut self) {
        if self.0.live.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.wake.notify_one();
        }
    }
}

impl Pool {
    pub fn new(opts: PoolOptions) -> Pool {
        Pool {
            opts,
            pools: Mutex::new(HashMap::new()),
            live: AtomicUsize::new(0),
            hits: AtomicI64::new(0),
            misses: AtomicI64::new(0),
            reclaimed: Mutex::new(BTreeMap::new()),
            wake: tokio::sync::Notify::new(),
            changed: tokio::sync::Notify::new(),
        }
    }

    pub fn options(&self) -> &PoolOptions {
        &self.opts
    }

    pub fn live(&self) -> LiveCreate<'_> {
        self.live.fetch_add(1, Ordering::SeqCst);
        LiveCreate(self)
    }

    pub fn busy(&self) -> bool {
        self.live.load(Ordering::SeqCst) > 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Shape, Entry>> {
        self.pools.lock().expect("pool lock")
    }

    /// Takes a ready sandbox of this shape, if there is one: the claim is
    /// this removal, under the lock, so two creates never get the same.
    /// Marks the shape used (and registers it, so that it is refilled).
    pub fn take(&self, shape: &Shape) -> Option<String> {
        if self.opts.size == 0 {
            return None;
        }
        let mut pools = self.lock();
        if pools.get(shape).is_none_or(|e| e.target == 0) {
            self.register(&mut pools, shape.clone(), self.opts.size);
        }
        let e = pools.get_mut(shape).expect("registered");
        e.used = Instant::now();
        let id = e.ready.pop_front();
        drop(pools);
        self.wake.notify_one();
        id
    }

    /// Keeps a pool of `size` for this shape (PrewarmImage, or a miss).
    pub fn want(&self, shape: Shape, size: usize) {
        self.register(&mut self.lock(), shape, size);
        self.wake.notify_one();
    }

    fn register(&self, pools: &mut HashMap<Shape, Entry>, shape: Shape, size: usize) {
        // The least recently used pool gives way; its sandboxes are
        // removed by the refill (target 0).
        let live = pools
            .iter()
            .filter(|(s, e)| e.target > 0 && **s != shape)
            .count();
        if size > 0
            && live >= self.opts.max_pools
            && let Some((_, e)) = pools
                .iter_mut()
                .filter(|(s, e)| e.target > 0 && **s != shape)
                .min_by_key(|(_, e)| e.used)
        {
            e.target = 0;
        }
        let e = pools.entry(shape).or_insert_with(|| Entry {
            ready: VecDeque::new(),
            building: 0,
            target: 0,
            used: Instant::now(),
        });
        e.target = size;
        e.used = Instant::now();
    }

    pub fn hit(&self) {
        self.hits.fetch_add(1, Ordering::Relaxed);
        self.changed.notify_one();
    }

    pub fn miss(&self) {
        if self.opts.size > 0 {
            self.misses.fetch_add(1, Ordering::Relaxed);
            self.changed.notify_one();
        }
    }

    pub fn reclaimed(&self, outcome: &str) {
        *self
            .reclaimed
            .lock()
            .expect("reclaimed lock")
            .entry(outcome.into())
            .or_default() += 1;
        self.changed.notify_one();
    }

    /// A shape short of its target, now counted as building one.
    pub fn next_build(&self) -> Option<Shape> {
        let mut pools = self.lock();
        let (shape, e) = pools
            .iter_mut()
            .filter(|(_, e)| e.ready.len() + e.building < e.target)
            .min_by_key(|(_, e)| e.ready.len() + e.building)?;
        e.building += 1;
        Some(shape.clone())
    }

    /// A build finished: `Some(id)` is ready to be claimed. Returns false
    /// when the pool no longer wants it (it shrank meanwhile).
    pub fn built(&self, shape: &Shape, id: Option<String>) -> bool {
        let mut pools = self.lock();
        let Some(e) = pools.get_mut(shape) else {
            return false;
        };
        e.building = e.building.saturating_sub(1);
        let Some(id) = id else { return true };
        if e.ready.len() >= e.target {
            return false;
        }
        e.ready.push_back(id);
        drop(pools);
        self.changed.notify_one();
        true
    }

    /// Puts back a sandbox found pooled at start (re-adopted).
    pub fn adopt(&self, shape: Shape, id: String) {
        let mut pools = self.lock();
        if pools.get(&shape).is_none_or(|e| e.target == 0) {
            self.register(&mut pools, shape.clone(), self.opts.size);
        }
        if let Some(e) = pools.get_mut(&shape) {
            e.ready.push_back(id);
        }
    }

    /// Ready sandboxes no pool wants any more (shrunk, evicted or idle
    /// past `idle`), taken out to be removed; emptied pools are forgotten.
    pub fn surplus(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut pools = self.lock();
        for e in pools.values_mut() {
            if e.used.elapsed() > self.opts.idle {
                e.target = 0;
            }
            while e.ready.len() > e.target {
                out.extend(e.ready.pop_back());
            }
        }
        pools.retain(|_, e| e.target > 0 || e.building > 0);
        if !out.is_empty() {
            self.changed.notify_one();
        }
        out
    }

    /// Ready sandboxes now (a pooled one whose container died is dropped
    /// from here by `forget`).
    pub fn forget(&self, id: &str) {
        for e in self.lock().values_mut() {
            e.ready.retain(|x| x != id);
        }
        self.changed.notify_one();
    }

    /// Ready sandboxes of one shape.
    pub fn ready_of(&self, shape: &Shape) -> usize {
        self.lock().get(shape).map_or(0, |e| e.ready.len())
    }

    pub fn stats(&self) -> wpb::PoolStats {
        let pools = self.lock();
        wpb::PoolStats {
            ready: pools.values().map(|e| e.ready.len() as i64).sum(),
            target: pools.values().map(|e| e.target as i64).sum(),
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            reclaimed: self
                .reclaimed
                .lock()
                .expect("reclaimed lock")
                .iter()
                .map(|(k, v)| (k.clone(), *v))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(mem: i64) -> Shape {
        Shape {
            image: "host".into(),
            cpu_millis: 1000,
            memory_mib: mem,
            disk_mib: 0,
            max_pids: 0,
            runtime: String::new(),
            isolation: Default::default(),
        }
    }

    fn pool(size: usize, max_pools: usize) -> Pool {
        Pool::new(PoolOptions {
            size,
            max_pools,
            ..Default::default()
        })
    }

    #[test]
    fn a_miss_registers_the_shape_and_builds_fill_it() {
        let p = pool(2, 4);
        assert_eq!(p.take(&shape(512)), None);
        assert_eq!(p.next_build(), Some(shape(512)));
        assert_eq!(p.next_build(), Some(shape(512)));
        assert_eq!(p.next_build(), None, "two building is the target");
        assert!(p.built(&shape(512), Some("a".into())));
        assert!(p.built(&shape(512), None), "a failed build frees its place");
        assert_eq!(p.next_build(), Some(shape(512)));
        assert_eq!(p.stats().ready, 1);
        assert_eq!(p.take(&shape(512)).as_deref(), Some("a"));
        assert_eq!(p.take(&shape(512)), None);
        assert_eq!(p.take(&shape(256)), None, "another shape is another pool");
    }

    #[test]
    fn each_ready_sandbox_is_claimed_once_under_contention() {
        let p = std::sync::Arc::new(pool(64, 4));
        p.want(shape(1), 64);
        for i in 0..64 {
            p.next_build();
            p.built(&shape(1), Some(format!("s{i}")));
        }
        let got: Vec<String> = (0..8)
            .map(|_| {
                let p = p.clone();
                std::thread::spawn(move || {
                    (0..16)
                        .filter_map(|_| p.take(&shape(1)))
                        .collect::<Vec<_>>()
                })
            })
            .flat_map(|t| t.join().unwrap())
            .collect();
        let mut uniq = got.clone();
        uniq.sort();
        uniq.dedup();
        assert_eq!((got.len(), uniq.len()), (64, 64));
    }

    #[test]
    fn the_least_recently_used_pool_gives_way_and_is_emptied() {
        let p = pool(1, 2);
        for m in [1, 2] {
            p.take(&shape(m));
            p.next_build();
            p.built(&shape(m), Some(format!("m{m}")));
        }
        std::thread::sleep(Duration::from_millis(2));
        p.take(&shape(2));
        p.take(&shape(3));
        // Shape 1 was used least recently: its sandbox is surplus.
        assert_eq!(p.surplus(), vec!["m1".to_string()]);
        assert_eq!(p.stats().target, 2);
    }

    #[test]
    fn size_zero_is_off() {
        let p = pool(0, 4);
        assert_eq!(p.take(&shape(1)), None);
        assert_eq!(p.next_build(), None);
        p.miss();
        assert_eq!(p.stats().misses, 0);
    }

    #[test]
    fn a_build_the_pool_no_longer_wants_is_refused() {
        let p = pool(1, 4);
        p.want(shape(1), 1);
        p.next_build();
        p.want(shape(1), 0);
        assert!(!p.built(&shape(1), Some("late".into())));
    }
}
