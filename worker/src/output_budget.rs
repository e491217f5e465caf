//! What following a sandbox's output may cost the host: the bytes of its
//! process output streams (StartProcess, ConnectProcess,
//! FollowProcessLogs, the PTY's Attach, GetProcessLogs) leave the data
//! plane at most at `rate` bytes per second per sandbox, with a burst of
//! `burst`. The agent's own work is in the sandbox's cgroup, but every
//! byte it sends is then copied by the worker, the server and the gateway,
//! outside it: `yes` followed by a client slowed another tenant's CPU work
//! 1.9× before. Held back, a stream's bytes wait in the agent's flow
//! control window (and its log on disk), so nothing is lost, only slowed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A token bucket: `rate` bytes a second, holding at most `burst`.
#[derive(Debug)]
pub struct Bucket {
    rate: f64,
    burst: f64,
    /// Tokens, and when they were counted.
    state: Mutex<(f64, Instant)>,
}

impl Bucket {
    pub fn new(rate: u64, burst: u64) -> Bucket {
        Bucket {
            rate: rate as f64,
            burst: burst.max(1) as f64,
            state: Mutex::new((burst as f64, Instant::now())),
        }
    }

    /// Takes `n` bytes' worth (going into debt if need be) and says how
    /// long to wait before sending them, so the average holds.
    pub fn take(&self, n: usize, now: Instant) -> Duration {
        let mut s = self.state.lock().expect("bucket");
        let elapsed = now.saturating_duration_since(s.1).as_secs_f64();
        s.0 = (s.0 + elapsed * self.rate).min(self.burst);
        s.1 = now;
        s.0 -= n as f64;
        if s.0 >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-s.0 / self.rate)
        }
    }
}

/// One bucket per sandbox, shared by all its output streams.
#[derive(Debug)]
pub struct OutputBudgets {
    rate: u64,
    burst: u64,
    buckets: Mutex<HashMap<String, Arc<Bucket>>>,
}

/// The agent methods whose responses are process output.
pub fn is_output(path: &str) -> bool {
    let method = path.rsplit('/').next().unwrap_or("");
    path.starts_with("/talon.agent.v1.SandboxAgentService/")
        && matches!(
            method,
            "StartProcess"
                | "ConnectProcess"
                | "FollowProcessLogs"
                | "Attach"
                | "GetProcessLogs"
                | "RunAgent"
                | "ConnectAgentRun"
                | "RunCode"
        )
}

impl OutputBudgets {
    /// `rate` 0: no limit.
    pub fn new(rate: u64, burst: u64) -> OutputBudgets {
        OutputBudgets {
            rate,
            burst,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// The sandbox's bucket, None when output is not limited.
    pub fn of(&self, sandbox: &str) -> Option<Arc<Bucket>> {
        if self.rate == 0 {
            return None;
        }
        let mut b = self.buckets.lock().expect("budgets");
        // Buckets of sandboxes no stream holds any more are dropped.
        if b.len() > 64 {
            b.retain(|_, v| Arc::strong_count(v) > 1);
        }
        Some(
            b.entry(sandbox.to_string())
                .or_insert_with(|| Arc::new(Bucket::new(self.rate, self.burst)))
                .clone(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_average_holds_after_the_burst() {
        let b = Bucket::new(1000, 500);
        let t0 = Instant::now();
        assert_eq!(b.take(500, t0), Duration::ZERO);
        // Over the burst: wait for what is owed.
        assert_eq!(b.take(1000, t0), Duration::from_secs(1));
        // A second later the debt is paid, and nothing is saved beyond.
        let t1 = t0 + Duration::from_secs(1);
        assert_eq!(b.take(0, t1), Duration::ZERO);
        let t2 = t1 + Duration::from_secs(100);
        assert_eq!(b.take(500, t2), Duration::ZERO);
        assert!(b.take(1, t2) > Duration::ZERO);
    }

    #[test]
    fn output_methods() {
        assert!(is_output(
            "/talon.agent.v1.SandboxAgentService/StartProcess"
        ));
        assert!(is_output("/talon.agent.v1.SandboxAgentService/Attach"));
        assert!(!is_output("/talon.agent.v1.SandboxAgentService/ReadFile"));
        assert!(!is_output(
            "/talon.worker.v1.WorkerImageService/StartProcess"
        ));
        assert!(OutputBudgets::new(0, 0).of("sbx").is_none());
        let b = OutputBudgets::new(10, 10);
        assert!(Arc::ptr_eq(&b.of("a").unwrap(), &b.of("a").unwrap()));
    }
}
