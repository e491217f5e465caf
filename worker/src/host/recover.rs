//! What a starting worker finds, set right before anything else is done
//! with it: its sandboxes outlive it by design (an upgrade, a crash, a
//! long outage), but a reboot, or a crash at any point of a command,
//! leaves some of them otherwise than their records say.
//!
//! - Running or paused, container alive: re-adopted as it is (its
//!   processes, PTYs and logs are the agent's, which never stopped).
//! - Running or paused, container gone (the host restarted, or its
//!   processes were killed while the worker was down): whatever is left
//!   of its container and mounts goes, its workspace stays, and it is
//!   STOPPED, marked so that the control plane applies its restart
//!   policy. Never FAILED: its files are there.
//! - Being built (a create cut short): removed, as a failed build would
//!   be; the control plane builds it again (it is not held here).
//! - Stopped or failed: nothing of it may run or stay mounted.
//!
//! Pooled sandboxes, and those a claim from the pool left mid-way, are
//! the pool's (`reclaim_pool`).

use super::*;
use crate::runtime::ContainerStatus;

/// What the pass did, for the log.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Settled {
    pub adopted: usize,
    pub stopped: usize,
    pub removed: usize,
}

impl SandboxHost {
    /// Whether a held sandbox's container is alive. Its recorded init
    /// (pid and start time) decides when there is one: after a reboot a
    /// runtime's state file may name a pid the kernel has given to another
    /// process.
    pub(super) async fn container_alive(&self, h: &Held) -> bool {
        if h.init.is_some() {
            return h.live_init().is_some();
        }
        match self.runtime_for(h.isolation) {
            Ok(rt) => matches!(
                rt.status(h.cid()).await,
                Ok(Some(ContainerStatus::Running | ContainerStatus::Paused))
            ),
            Err(_) => false,
        }
    }

    /// Sets right what the last run (or the host's restart) left; see the
    /// module doc. Runs once, at the worker's start, before the network
    /// re-attaches what lives.
    pub async fn settle(&self) -> Settled {
        let mut out = Settled::default();
        for (dir, h) in self.held_dirs() {
            if h.pooled.is_some() || h.state == SandboxPhase::Claiming || dir != h.sandbox_id {
                continue;
            }
            let lock = self.lock(&dir).await;
            let _g = lock.lock().await;
            let r = match h.state {
                SandboxPhase::Running | SandboxPhase::Paused => {
                    if self.container_alive(&h).await && self.reachable_layout(&h) {
                        out.adopted += 1;
                        self.match_freezer(&h).await;
                        continue;
                    }
                    out.stopped += 1;
                    self.stop_gone(h).await
                }
                SandboxPhase::Starting => {
                    out.removed += 1;
                    self.teardown(&dir).await
                }
                // A stop or a failed start that a crash cut short leaves
                // mounts (its container goes first); a reboot, none.
                SandboxPhase::Stopped | SandboxPhase::Failed
                    if !crate::rootfs::mounts_under(&self.layout(&dir).dir).is_empty() =>
                {
                    self.quiesce(&h).await
                }
                SandboxPhase::Stopped | SandboxPhase::Failed => Ok(()),
                SandboxPhase::Pooled | SandboxPhase::Claiming => Ok(()),
            };
            if let Err(e) = r {
                tracing::error!(sandbox = %dir, error = %e, "could not set right what the last run left");
            }
        }
        out
    }

    /// A live container frozen or thawed as its record says: a snapshot's
    /// copy, a pause or a resume cut short by a crash leaves it otherwise
    /// (frozen for good under a record that says running, say).
    async fn match_freezer(&self, h: &Held) {
        let Ok(rt) = self.runtime_for(h.isolation) else {
            return;
        };
        let frozen = matches!(rt.status(h.cid()).await, Ok(Some(ContainerStatus::Paused)));
        let r = match (h.state, frozen) {
            (SandboxPhase::Running, true) => rt.resume(h.cid()).await,
            (SandboxPhase::Paused, false) => rt.pause(h.cid()).await,
            _ => Ok(()),
        };
        if let Err(e) = r {
            tracing::warn!(sandbox = %h.sandbox_id, error = %e, "could not freeze or thaw it as its record says");
        }
    }

    /// Whether a live sandbox's agent can be reached in this worker's
    /// layout. A container started by a worker older than the agent
    /// socket's move (it listened at a path inside the sandbox) has no
    /// socket in its directory: its calls could never be forwarded, so it
    /// is stopped and started again in the current layout (its restart
    /// policy) rather than left unreachable.
    fn reachable_layout(&self, h: &Held) -> bool {
        match h.isolation {
            crate::runtime::Isolation::Container => {
                let socket = self.layout(&h.sandbox_id).agent_socket();
                let ok = std::fs::symlink_metadata(&socket).is_ok();
                if !ok {
                    tracing::warn!(sandbox = %h.sandbox_id, format = h.format, "an older layout (no agent socket in its directory): stopped, to be started again in this one");
                }
                ok
            }
            crate::runtime::Isolation::Gvisor => true,
        }
    }

    /// A sandbox whose container is gone: what is left of it goes, and
    /// it is stopped with its workspace, marked for its restart policy.
    async fn stop_gone(&self, mut h: Held) -> anyhow::Result<()> {
        tracing::warn!(sandbox = %h.sandbox_id, "its container was gone at the worker's start (the host restarted?): stopped, its workspace kept");
        self.quiesce(&h).await?;
        h.state = SandboxPhase::Stopped;
        h.init = None;
        h.env_unset = None;
        h.container_gone = true;
        self.save(&h)
    }

    /// Nothing of a sandbox that should not run runs, or stays mounted:
    /// its container (if the runtime still has one) and its mounts go;
    /// its files stay.
    async fn quiesce(&self, h: &Held) -> anyhow::Result<()> {
        // Straight to kill and delete: a dead container's stale state may
        // not even answer a status (after a reboot), and must still go, or
        // its next start finds it "already exists".
        let rt = self.runtime_for(h.isolation)?;
        let _ = rt.resume(h.cid()).await;
        if let Err(e) = rt.delete(h.cid()).await {
            tracing::debug!(sandbox = %h.sandbox_id, error = %e, "no container to remove");
        }
        self.detach_network(h).await;
        crate::rootfs::unmount_under(&self.layout(&h.sandbox_id).dir)
    }
}
