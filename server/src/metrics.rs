//! Prometheus metrics, served on the ops port.

use prometheus::{HistogramVec, IntCounterVec, IntGauge, Registry};
use std::sync::Arc;
use std::time::Duration;

#[derive(Clone)]
pub struct Metrics {
    pub registry: Arc<Registry>,
    rpc_total: IntCounterVec,
    rpc_seconds: HistogramVec,
    pub workers_connected: IntGauge,
    pub stale_events: prometheus::IntCounter,
    /// Preview tokens by outcome: signed, verified, expired, invalid, or
    /// denied (a good token for another sandbox or port).
    pub preview_tokens: IntCounterVec,
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
        Metrics {
            registry: Arc::new(registry),
            rpc_total,
            rpc_seconds,
            workers_connected,
            stale_events,
            preview_tokens,
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
