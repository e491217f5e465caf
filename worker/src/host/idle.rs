//! Idle auto-pause: a sandbox whose spec sets `idle_timeout` is frozen
//! once nothing has happened in it for that long, and reported PAUSED in
//! an event (the server applies it through the fence and releases its
//! cpu share). Activity is three clocks, the latest of which counts: the
//! calls this worker's data plane forwards to it (`touch`), the agent's
//! own (process output, stdin and PTY input, preview traffic, code
//! output: `PingResponse.idle_millis`), and its last start or thaw (a
//! frozen agent's clock runs on, so a thaw must count as activity).

use super::*;
use std::time::Instant;

/// How long an agent has to say how idle it is; one that does not is
/// not paused on a doubt.
const PING_PATIENCE: Duration = Duration::from_secs(2);

/// The idle timeout a spec asks for, in ms; None: never.
pub(super) fn idle_limit(spec: &wpb::SandboxSpec) -> Option<u64> {
    spec.idle_timeout
        .as_ref()
        .map(|d| d.seconds.max(0) as u64 * 1000 + d.nanos.max(0) as u64 / 1_000_000)
        .filter(|ms| *ms > 0)
}

/// A sandbox's activity as this worker sees it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Seen {
    /// The last call, start or thaw.
    last: Instant,
    /// Set from the start of an idle pause until the thaw: calls are
    /// turned away then (`admit`), so that none reaches a frozen agent.
    pausing: bool,
}

impl Seen {
    fn now() -> Seen {
        Seen {
            last: Instant::now(),
            pausing: false,
        }
    }
}

impl SandboxHost {
    /// Something happened in the sandbox (it started or thawed): its idle
    /// time starts again.
    pub fn touch(&self, id: &str) {
        self.activity
            .lock()
            .expect("activity")
            .insert(id.to_string(), Seen::now());
    }

    /// A call is about to reach the sandbox: its idle time starts again,
    /// unless an idle pause is under way, which turns it away (false).
    /// One lock with `begin_pause`, so a call is either seen by the pause
    /// (which then does not happen) or turned away.
    pub fn admit(&self, id: &str) -> bool {
        let mut a = self.activity.lock().expect("activity");
        let seen = a.entry(id.to_string()).or_insert_with(Seen::now);
        if seen.pausing {
            return false;
        }
        seen.last = Instant::now();
        true
    }

    /// Since the last touch; a sandbox not seen yet (this worker just
    /// started) is touched now.
    fn since_touch(&self, id: &str) -> Duration {
        self.activity
            .lock()
            .expect("activity")
            .entry(id.to_string())
            .or_insert_with(Seen::now)
            .last
            .elapsed()
    }

    /// Starts an idle pause if nothing was admitted for `limit`.
    pub(super) fn begin_pause(&self, id: &str, limit: Duration) -> bool {
        let mut a = self.activity.lock().expect("activity");
        let seen = a.entry(id.to_string()).or_insert_with(Seen::now);
        if seen.last.elapsed() < limit {
            return false;
        }
        seen.pausing = true;
        true
    }

    fn end_pause(&self, id: &str) {
        if let Some(s) = self.activity.lock().expect("activity").get_mut(id) {
            s.pausing = false;
        }
    }

    /// Freezes the running sandboxes idle past their timeout; their
    /// statuses (PAUSED, saying why) are for the server. Run on a timer
    /// (every 2 s) apart from the session's loop, as it asks agents.
    pub async fn pause_idle(&self) -> Vec<wpb::SandboxStatus> {
        let mut out = Vec::new();
        for (id, h) in self.held_dirs() {
            let Some(limit) = h.idle_timeout_ms.map(Duration::from_millis) else {
                continue;
            };
            if id != h.sandbox_id
                || h.state != SandboxPhase::Running
                || self.since_touch(&id) < limit
            {
                continue;
            }
            let lock = self.lock(&id).await;
            let _g = lock.lock().await;
            // Again under the lock: a command may have moved it.
            let Some(mut h) = self
                .held(&id)
                .filter(|x| x.state == SandboxPhase::Running && x.generation == h.generation)
            else {
                continue;
            };
            match self.agent_idle(&h).await {
                Ok(idle) if idle < limit => continue,
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(sandbox = %id, error = %e, "idle check: the agent did not say");
                    continue;
                }
            }
            // A call may have arrived while the agent was asked; from here
            // on calls are turned away until it is frozen and recorded.
            if !self.begin_pause(&id, limit) {
                continue;
            }
            let frozen = match self.runtime_for(h.isolation) {
                Ok(rt) => rt.pause(h.cid()).await,
                Err(e) => Err(e),
            };
            if let Err(e) = frozen {
                self.end_pause(&id);
                tracing::warn!(sandbox = %id, error = %e, "idle sandbox not paused");
                continue;
            }
            // Calls stay turned away until the thaw (`touch`): one that
            // read the record before this save must not reach the agent.
            h.state = SandboxPhase::Paused;
            let saved = self.save(&h);
            if let Err(e) = saved {
                tracing::warn!(sandbox = %id, error = %e, "idle pause not recorded");
            }
            let why = format!("paused after {} s without activity", limit.as_secs_f64());
            tracing::info!(sandbox = %id, "{why}");
            out.push(Self::status(&h, &why));
        }
        out
    }

    /// How long the sandbox's agent has seen nothing happen.
    async fn agent_idle(&self, h: &Held) -> anyhow::Result<Duration> {
        let pid = self
            .pid_of(h)
            .await?
            .ok_or_else(|| anyhow::anyhow!("the sandbox's container is gone"))?;
        let peer = AgentPeer { pid, uid: h.uid() };
        let socket = self.layout(&h.sandbox_id).agent_socket();
        let asked = async {
            let r = crate::agent_client(&socket, peer)
                .await?
                .ping(talon_proto::talon::agent::v1::PingRequest {})
                .await?;
            anyhow::Ok(r.into_inner().idle_millis)
        };
        let ms = tokio::time::timeout(PING_PATIENCE, asked)
            .await
            .map_err(|_| anyhow::anyhow!("no answer to Ping"))??;
        Ok(Duration::from_millis(ms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_limits_read_from_the_spec() {
        let mut spec = wpb::SandboxSpec::default();
        assert_eq!(idle_limit(&spec), None);
        spec.idle_timeout = Some(prost_types::Duration {
            seconds: 0,
            nanos: 0,
        });
        assert_eq!(idle_limit(&spec), None);
        spec.idle_timeout = Some(prost_types::Duration {
            seconds: 12,
            nanos: 500_000_000,
        });
        assert_eq!(idle_limit(&spec), Some(12_500));
    }
}
