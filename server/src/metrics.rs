//! Prometheus metrics, served on the ops port.

use prometheus::{HistogramVec, IntCounterVec, IntGauge, IntGaugeVec, Registry};
use std::sync::Arc;
use std::time::Duration;

#[derive(Clone)]
pub struct Metrics {
    pub registry: Arc<Registry>,
    rpc_total: IntCounterVec,
    rpc_seconds: HistogramVec,
    pub workers_connected: IntGauge,
    pub stale_events: prometheus::IntCounter,
    /// Sandboxes a worker held that the control plane did not keep,
    /// which it was told to remove.
    pub orphans_removed: prometheus::IntCounter,
    /// Preview tokens by outcome: signed, verified, expired, invalid, or
    /// denied (a good token for another sandbox or port).
    pub preview_tokens: IntCounterVec,
    /// Sandbox browsers that ended on their own.
    pub browser_crashes: prometheus::IntCounter,
    /// Password sign-ins by outcome: ok, failed, throttled.
    pub logins: IntCounterVec,
    /// Sandboxes their worker paused for being idle.
    pub idle_pauses: prometheus::IntCounter,
    /// Paused sandboxes resumed for a call (`auto_resume`).
    pub auto_resumes: prometheus::IntCounter,
    /// 1 while this server holds the duties lease (domain::lease).
    pub duties_leader: IntGauge,
    /// Other servers' cache invalidations applied here (peers.rs).
    pub cache_invalidations_received: prometheus::IntCounter,
    /// This server's invalidations it could not send (peers.rs).
    pub cache_notify_failures: prometheus::IntCounter,
    /// The autopilot's work (domain::autopilot).
    pub failover: Failover,
    pool_ready: IntGaugeVec,
    pool_target: IntGaugeVec,
    pool_hits: IntCounterVec,
    pool_misses: IntCounterVec,
    pool_reclaimed: IntCounterVec,
}

/// What the autopilot did: workers found lost, waves of moves, sandboxes
/// moved, and moves waiting for a worker with room.
#[derive(Clone)]
pub struct Failover {
    pub workers_lost: prometheus::IntCounter,
    pub waves: prometheus::IntCounter,
    pub moved: prometheus::IntCounter,
    pub move_failures: prometheus::IntCounter,
    pub waiting: IntGauge,
    pub no_capacity: prometheus::IntCounter,
}

impl Failover {
    fn register(registry: &Registry) -> Self {
        let counter = |name: &str, help: &str| {
            let c = prometheus::IntCounter::new(name, help).expect("metric");
            registry.register(Box::new(c.clone())).expect("register");
            c
        };
        let f = Failover {
            workers_lost: counter(
                "talon_workers_lost_total",
                "Workers whose lease lapsed (found lost by the autopilot)",
            ),
            waves: counter(
                "talon_failover_waves_total",
                "Lost workers whose sandboxes the autopilot began to move",
            ),
            moved: counter(
                "talon_failover_sandboxes_moved_total",
                "Sandboxes moved off lost workers",
            ),
            move_failures: counter(
                "talon_failover_move_failures_total",
                "Moves off lost workers that failed for another reason than room (retried)",
            ),
            waiting: IntGauge::new(
                "talon_failover_waiting_sandboxes",
                "Sandboxes of lost workers waiting for a worker with room",
            )
            .expect("metric"),
            no_capacity: counter(
                "talon_failover_no_capacity_total",
                "Times the autopilot found no worker with room for a lost worker's sandbox",
            ),
        };
        registry
            .register(Box::new(f.waiting.clone()))
            .expect("register");
        f
    }
}

impl Metrics {
    pub fn new() -> Self {
        let registry = Registry::new();
        let rpc_total = IntCounterVec::new(
            prometheus::Opts::new("talon_rpc_requests_total", "RPCs by method and gRPC code"),
            &["method", "code"],
        )
        .expect("metric");
        let rpc_seconds = HistogramVec::new(
            prometheus::HistogramOpts::new(
                "talon_rpc_duration_seconds",
                "Time to the response headers",
            )
            .buckets(vec![
                0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 5.0,
            ]),
            &["method"],
        )
        .expect("metric");
        let workers_connected =
            IntGauge::new("talon_workers_connected", "Workers with an open session")
                .expect("metric");
        let stale_events = prometheus::IntCounter::new(
            "talon_worker_stale_events_total",
            "Worker events refused for a stale generation",
        )
        .expect("metric");
        registry
            .register(Box::new(rpc_total.clone()))
            .expect("register");
        registry
            .register(Box::new(rpc_seconds.clone()))
            .expect("register");
        registry
            .register(Box::new(workers_connected.clone()))
            .expect("register");
        registry
            .register(Box::new(stale_events.clone()))
            .expect("register");
        let orphans_removed = prometheus::IntCounter::new(
            "talon_worker_orphans_removed_total",
            "Sandboxes a worker held that the control plane did not keep (removed)",
        )
        .expect("metric");
        registry
            .register(Box::new(orphans_removed.clone()))
            .expect("register");
        let browser_crashes = prometheus::IntCounter::new(
            "talon_browser_crashes_total",
            "Sandbox browsers that ended on their own (killed, out of memory)",
        )
        .expect("metric");
        registry
            .register(Box::new(browser_crashes.clone()))
            .expect("register");
        let idle_pauses = prometheus::IntCounter::new(
            "talon_sandbox_idle_pauses_total",
            "Sandboxes their worker paused for being idle past their idle_timeout",
        )
        .expect("metric");
        registry
            .register(Box::new(idle_pauses.clone()))
            .expect("register");
        let auto_resumes = prometheus::IntCounter::new(
            "talon_sandbox_auto_resumes_total",
            "Paused sandboxes resumed for a call that reached them (auto_resume)",
        )
        .expect("metric");
        registry
            .register(Box::new(auto_resumes.clone()))
            .expect("register");
        let failover = Failover::register(&registry);
        let duties_leader = IntGauge::new(
            "talon_duties_leader",
            "1 while this server runs the once-per-platform duties (it holds their lease)",
        )
        .expect("metric");
        registry
            .register(Box::new(duties_leader.clone()))
            .expect("register");
        let cache_invalidations_received = prometheus::IntCounter::new(
            "talon_cache_invalidations_received_total",
            "Cache invalidations from other servers on the same PostgreSQL, applied here",
        )
        .expect("metric");
        registry
            .register(Box::new(cache_invalidations_received.clone()))
            .expect("register");
        let cache_notify_failures = prometheus::IntCounter::new(
            "talon_cache_notify_failures_total",
            "Cache invalidations this server could not send to the others (they expire within the cache ttl)",
        )
        .expect("metric");
        registry
            .register(Box::new(cache_notify_failures.clone()))
            .expect("register");
        let preview_tokens = IntCounterVec::new(
            prometheus::Opts::new(
                "sandbox_preview_token_total",
                "Preview tokens signed, and checked by outcome",
            ),
            &["outcome"],
        )
        .expect("metric");
        registry
            .register(Box::new(preview_tokens.clone()))
            .expect("register");
        let logins = IntCounterVec::new(
            prometheus::Opts::new(
                "talon_logins_total",
                "Password sign-ins (Login, CreateBrowserSession) by outcome",
            ),
            &["outcome"],
        )
        .expect("metric");
        registry
            .register(Box::new(logins.clone()))
            .expect("register");
        let gauge = |name: &str, help: &str| {
            let g =
                IntGaugeVec::new(prometheus::Opts::new(name, help), &["worker"]).expect("metric");
            registry.register(Box::new(g.clone())).expect("register");
            g
        };
        let counter = |name: &str, help: &str, labels: &[&str]| {
            let c = IntCounterVec::new(prometheus::Opts::new(name, help), labels).expect("metric");
            registry.register(Box::new(c.clone())).expect("register");
            c
        };
        let pool_ready = gauge(
            "sandbox_prewarm_pool_ready",
            "Pooled sandboxes ready to be claimed, per worker",
        );
        let pool_target = gauge(
            "sandbox_prewarm_pool_target",
            "Pooled sandboxes each worker aims to keep",
        );
        let pool_hits = counter(
            "sandbox_prewarm_hits_total",
            "Creates served from a worker's prewarm pool",
            &["worker"],
        );
        let pool_misses = counter(
            "sandbox_prewarm_misses_total",
            "Creates built cold while the pool was on",
            &["worker"],
        );
        let pool_reclaimed = counter(
            "sandbox_prewarm_reclaimed_total",
            "Pooled sandboxes found at a worker's start: kept, removed or failed",
            &["worker", "outcome"],
        );
        Metrics {
            pool_ready,
            pool_target,
            pool_hits,
            pool_misses,
            pool_reclaimed,
            registry: Arc::new(registry),
            rpc_total,
            rpc_seconds,
            workers_connected,
            stale_events,
            orphans_removed,
            preview_tokens,
            browser_crashes,
            logins,
            idle_pauses,
            auto_resumes,
            duties_leader,
            cache_invalidations_received,
            cache_notify_failures,
            failover,
        }
    }

    pub fn rpc(&self, method: &str, code: tonic::Code, took: Duration) {
        self.rpc_total
            .with_label_values(&[method, crate::audit::code_name(code)])
            .inc();
        self.rpc_seconds
            .with_label_values(&[method])
            .observe(took.as_secs_f64());
    }

    /// A worker's pool figures from its heartbeat; its counters count from
    /// its start, so the increase since `last` (all of it after a restart)
    /// is added.
    pub fn pool(
        &self,
        worker: &str,
        last: &talon_proto::talon::worker::v1::PoolStats,
        now: &talon_proto::talon::worker::v1::PoolStats,
    ) {
        let delta = |n: i64, l: i64| (if n >= l { n - l } else { n }).max(0) as u64;
        self.pool_ready.with_label_values(&[worker]).set(now.ready);
        self.pool_target
            .with_label_values(&[worker])
            .set(now.target);
        self.pool_hits
            .with_label_values(&[worker])
            .inc_by(delta(now.hits, last.hits));
        self.pool_misses
            .with_label_values(&[worker])
            .inc_by(delta(now.misses, last.misses));
        for (outcome, n) in &now.reclaimed {
            let l = last.reclaimed.get(outcome).copied().unwrap_or(0);
            self.pool_reclaimed
                .with_label_values(&[worker, outcome])
                .inc_by(delta(*n, l));
        }
    }

    /// Every family as the ops listener exports it, for the admin API.
    pub fn gather(&self) -> Vec<prometheus::proto::MetricFamily> {
        self.registry.gather()
    }

    pub fn render(&self) -> String {
        let mut buf = String::new();
        let enc = prometheus::TextEncoder::new();
        let _ = enc.encode_utf8(&self.registry.gather(), &mut buf);
        buf
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}
