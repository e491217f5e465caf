//! The prewarm pool's actions on the host: claiming a pooled sandbox for
//! a create, keeping pools full, and reclaiming what the last run left.

use super::prepare::*;
use super::*;
use crate::pool::{Pool, Shape};
use crate::runtime::ContainerStatus;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use talon_core::image::HOST_IMAGE;
use talon_proto::talon::worker::v1 as wpb;

impl SandboxHost {
    /// Makes the pooled sandbox `pooled` the sandbox `id`: its directory
    /// is renamed (mounts move with it), the agent takes the sandbox's
    /// environment, the hostname is set, its secrets are written, and its
    /// network goes from the default policy to the sandbox's when that
    /// differs. The container keeps its name ([`Held::container`]).
    pub(super) async fn claim(
        &self,
        id: &str,
        generation: i64,
        spec: &wpb::SandboxSpec,
        pooled: &str,
    ) -> anyhow::Result<wpb::SandboxStatus> {
        let t0 = std::time::Instant::now();
        let plock = self.lock(pooled).await;
        let _pg = plock.lock().await;
        let mut h = self
            .held(pooled)
            .filter(|h| h.pooled.is_some() && h.state == SandboxPhase::Pooled)
            .ok_or_else(|| anyhow::anyhow!("the pooled sandbox {pooled} is gone"))?;
        // A sandbox pooled from an older import is not the image asked for.
        anyhow::ensure!(
            self.image_current(&h),
            "the pooled sandbox was built from an older import of {}",
            spec.image
        );
        let pid = self
            .pid_of(&h)
            .await?
            .ok_or_else(|| anyhow::anyhow!("the pooled sandbox's container is gone"))?;
        let layout = self.layout(id);
        h.sandbox_id = id.into();
        h.container = Some(pooled.into());
        h.generation = generation;
        h.pooled = None;
        h.state = SandboxPhase::Claiming;
        self.move_record(pooled, &h).await?;
        self.locks.lock().await.remove(pooled);
        let t_rename = t0.elapsed();
        sync_secrets(&layout, h.uid(), &spec.secret_files)?;
        let mut env: HashMap<String, String> = spec.env.clone().into_iter().collect();
        env.insert("TALON_SANDBOX_ID".into(), id.into());
        let (socket, peer) = self.agent_endpoint(&h).await?;
        crate::agent_client(&socket, peer)
            .await?
            .configure(talon_proto::talon::agent::v1::ConfigureRequest { env, unset: vec![] })
            .await?;
        let t_agent = t0.elapsed();
        let name: String = id.chars().take(63).collect();
        match self
            .runtime_for(h.isolation)?
            .set_hostname(h.cid(), &name)
            .await
        {
            Some(r) => r?,
            None => set_hostname(pid, &name).await?,
        }
        let t_host = t0.elapsed();
        let egress = crate::net::egress_from_proto(spec.network_policy.as_ref())?;
        // Without a network a sandbox has loopback only, as a cold one.
        if let Some(net) = self.net.get()
            && egress != h.egress
        {
            net.update(h.cid(), h.slot, &self.netns(&h, pid), &h.egress, &egress)
                .await?;
        }
        let t_net = t0.elapsed();
        h.egress = egress;
        h.state = SandboxPhase::Running;
        h.secrets_expire_at = first_expiry(spec);
        h.idle_timeout_ms = idle_limit(spec);
        h.move_on_loss = spec.move_on_worker_loss;
        self.touch(id);
        self.save(&h)?;
        keep_spec(&layout, spec)?;
        tracing::debug!(sandbox = %id, total = ?t0.elapsed(), rename = ?t_rename, agent = ?t_agent, hostname = ?t_host, network = ?t_net, "pooled sandbox claimed");
        Ok(Self::status(&h, ""))
    }

    /// Renames the sandbox directory and record `from` to `h`'s id. Its
    /// slot is in no record between the two: a create picking a free slot
    /// meanwhile would take it (two sandboxes with one uid range and one
    /// address), so this holds the lock slots are taken under (`build`).
    pub(super) async fn move_record(&self, from: &str, h: &Held) -> anyhow::Result<()> {
        let _slots = self.slots.lock().await;
        std::fs::rename(self.layout(from).dir, self.layout(&h.sandbox_id).dir)?;
        self.forget_record(from);
        self.save(h)
    }

    /// The pool's counters and sizes, for the heartbeat.
    pub fn pool(&self) -> &Arc<Pool> {
        &self.pool
    }

    /// Keeps a pool of `size` sandboxes of this shape (PrewarmImage; 0
    /// is the configured size) and waits up to `wait` for it to fill: how
    /// many are ready then.
    pub async fn prewarm(
        &self,
        spec: &wpb::SandboxSpec,
        size: usize,
        wait: Duration,
    ) -> anyhow::Result<usize> {
        let shape = Shape::of(spec);
        anyhow::ensure!(
            shape.image == HOST_IMAGE || self.images.get(&shape.image).is_some(),
            "image {:?} is not on this worker",
            shape.image
        );
        let size = if size == 0 {
            self.pool.options().size
        } else {
            size
        };
        anyhow::ensure!(
            size > 0,
            "this worker's prewarm pool is off (--prewarm-pool-size 0)"
        );
        self.pool.want(shape.clone(), size);
        let deadline = tokio::time::Instant::now() + wait;
        while self.pool.ready_of(&shape) < size && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(self.pool.ready_of(&shape))
    }

    /// Fills the pools in the background, forever: one build at a time,
    /// at most one per `refill_interval`, none while a live create runs;
    /// and removes the pooled sandboxes no pool wants any more.
    pub async fn refill(self: Arc<Self>) {
        let interval = self.pool.options().refill_interval;
        let mut failures = 0u32;
        loop {
            for gone in self.pool.surplus() {
                let _ = self.remove_pooled(&gone).await;
            }
            if self.pool.busy() {
                self.pool.wake.notified().await;
                // A create is usually followed by its first calls (an
                // exec, a file): let them have the cores first.
                tokio::time::sleep(interval).await;
                continue;
            }
            let Some(shape) = self.pool.next_build() else {
                // Idle pools are emptied on a timer too.
                let _ =
                    tokio::time::timeout(Duration::from_secs(30), self.pool.wake.notified()).await;
                continue;
            };
            let id = format!("{POOL_PREFIX}{}", uuid::Uuid::new_v4().simple());
            let built = self.build(&id, 0, &shape.spec(), Some(shape.clone())).await;
            match built {
                Ok(_) => {
                    failures = 0;
                    if !self.pool.built(&shape, Some(id.clone())) {
                        let _ = self.remove_pooled(&id).await;
                    }
                }
                Err(e) => {
                    self.pool.built(&shape, None);
                    let _ = self.teardown(&id).await;
                    failures += 1;
                    tracing::warn!(error = %e, image = %shape.image, "could not build a pooled sandbox");
                }
            }
            // Failures back off (an image that cannot start must not spin).
            let pause = interval * 2u32.pow(failures.min(8));
            tokio::time::sleep(pause).await;
        }
    }

    pub(super) async fn remove_pooled(&self, id: &str) -> anyhow::Result<()> {
        let lock = self.lock(id).await;
        let _g = lock.lock().await;
        if self.held(id).is_some_and(|h| h.pooled.is_some()) {
            self.teardown(id).await?;
        }
        drop(_g);
        self.locks.lock().await.remove(id);
        Ok(())
    }

    /// At start: pooled sandboxes left by the last run. Those still alive,
    /// of an image still here, go back in the pool ("kept"); the rest are
    /// removed ("removed", or "failed" when removal fails). A directory
    /// caught mid-claim (named apart from the sandbox it records) is a
    /// pooled container the server never learnt of: removed.
    pub async fn reclaim_pool(&self) {
        for (dir, h) in self.held_dirs() {
            let named = dir == h.sandbox_id;
            let leftover = h.pooled.is_some() || h.state == SandboxPhase::Claiming || !named;
            if !leftover {
                continue;
            }
            let alive = match self.runtime_for(h.isolation) {
                Ok(rt) => matches!(rt.status(h.cid()).await, Ok(Some(ContainerStatus::Running))),
                Err(_) => false,
            };
            // Built with this agent (a worker upgrade seals a new one).
            let agent_same =
                std::fs::read_to_string(self.layout(&dir).bundle().join("config.json"))
                    .is_ok_and(|c| c.contains(&*self.agent.to_string_lossy()));
            match &h.pooled {
                Some(shape)
                    if named
                        && alive
                        && self.image_current(&h)
                        && agent_same
                        && h.state == SandboxPhase::Pooled
                        && self.pool.options().size > 0 =>
                {
                    self.pool.adopt(shape.clone(), h.sandbox_id.clone());
                    self.pool.reclaimed("kept");
                }
                _ => match self.teardown(&dir).await {
                    Ok(()) => self.pool.reclaimed("removed"),
                    Err(e) => {
                        tracing::warn!(sandbox = %dir, error = %e, "could not remove a leftover pooled sandbox");
                        self.pool.reclaimed("failed");
                    }
                },
            }
        }
    }
}
