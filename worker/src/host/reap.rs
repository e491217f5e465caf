//! What a worker reports of what it holds, checked against the runtime,
//! and the sandboxes whose container died.

use super::*;
use crate::runtime::ContainerStatus;
use talon_proto::talon::worker::v1 as wpb;

impl SandboxHost {
    /// Whether `id` was deleted at `generation` or later, lately.
    pub(super) fn deleted_since(&self, id: &str, generation: i64) -> bool {
        let mut d = self.deleted.lock().expect("tombstones");
        d.retain(|_, (_, at)| at.elapsed() < TOMBSTONE_TTL);
        d.get(id).is_some_and(|(g, _)| *g >= generation)
    }

    /// Every sandbox this worker holds, with its state checked against the
    /// runtime: a container that died since the worker's start (`settle`)
    /// is reported failed, not running; one gone with its host is stopped,
    /// and says so (`container_gone`).
    pub async fn inventory(&self) -> Vec<wpb::SandboxStatus> {
        let mut out = Vec::new();
        for id in self.record_dirs() {
            let Some(h) = self.held(&id) else { continue };
            // Pooled sandboxes are the worker's own until claimed.
            if h.pooled.is_some() {
                continue;
            }
            // Alive, it is as its record says: a container frozen for a
            // moment (a snapshot's copy) is not a paused sandbox.
            let actual = match h.state {
                SandboxPhase::Running | SandboxPhase::Paused if !self.container_alive(&h).await => {
                    SandboxPhase::Failed
                }
                other => other,
            };
            let mut s = Self::status(&h, "");
            s.sandbox_id = id;
            s.state = actual.reported() as i32;
            if actual == SandboxPhase::Failed && h.state != SandboxPhase::Failed {
                s.message = "container is gone".into();
            }
            out.push(s);
        }
        out
    }

    /// Finds running or paused sandboxes whose container is gone (its init
    /// died or was killed) and marks them failed, returning what changed.
    pub async fn reap_dead(&self) -> Vec<wpb::SandboxStatus> {
        let mut out = Vec::new();
        for id in self.record_dirs() {
            let Some(h) = self.held(&id) else { continue };
            if !h.state.is_live() {
                continue;
            }
            let lock = self.lock(&id).await;
            let _g = lock.lock().await;
            // Re-read under the lock: a command may have changed it.
            let Some(mut h) = self.held(&id) else {
                // Deleted meanwhile; don't keep the lock made for it.
                drop(_g);
                self.locks.lock().await.remove(&id);
                continue;
            };
            if !h.state.is_live() {
                continue;
            }
            let rt = match self.runtime_for(h.isolation) {
                Ok(rt) => rt,
                Err(e) => {
                    tracing::warn!(sandbox = %id, error = %e, "runtime state unknown");
                    continue;
                }
            };
            match rt.status(h.cid()).await {
                Ok(Some(ContainerStatus::Running | ContainerStatus::Paused)) => {}
                Ok(_) if h.pooled.is_some() => {
                    // Nobody's sandbox: it leaves the pool and goes.
                    tracing::warn!(sandbox = %id, "a pooled sandbox died; removing it");
                    self.pool.forget(&id);
                    drop(_g);
                    let _ = self.teardown(&id).await;
                    self.locks.lock().await.remove(&id);
                }
                Ok(_) => {
                    let _ = rt.delete(h.cid()).await;
                    self.detach_network(&h).await;
                    h.state = SandboxPhase::Failed;
                    if self.save(&h).is_ok() {
                        out.push(Self::status(&h, "the sandbox's init process exited"));
                    }
                }
                Err(e) => tracing::warn!(sandbox = %id, error = %e, "runtime state unknown"),
            }
        }
        out
    }
}
