//! A sandbox's secrets after it was built: a rotated, deleted or expired
//! secret pushed by the control plane (`UpdateSecretsCommand`), and
//! expired ones removed by this worker on its own clock, so that a
//! secret's lifetime holds while the worker is cut off from the control
//! plane too.
//!
//! Files change at once in the sandbox's secrets tmpfs. Variables reach
//! the processes started after the change (through the agent's
//! Configure); a process already running keeps the environment it was
//! given, which nothing outside it can take back.

use super::*;
use talon_core::time::{now_ms, timestamp_to_ms};

/// How long the agent has to take a changed environment; if it does not,
/// the change stays pending (told at the next update or thaw).
const AGENT_PATIENCE: std::time::Duration = std::time::Duration::from_secs(5);

/// The earliest expiry among a spec's secrets.
pub(super) fn first_expiry(spec: &wpb::SandboxSpec) -> Option<i64> {
    spec.secret_expire_times.values().map(timestamp_to_ms).min()
}

/// Drops the secrets expired by `now` from a spec, files and variables
/// alike (a variable never shares a secret's name: the server refuses
/// that).
pub(super) fn drop_expired(spec: &mut wpb::SandboxSpec, now: i64) {
    let gone: Vec<String> = spec
        .secret_expire_times
        .iter()
        .filter(|(_, t)| timestamp_to_ms(t) <= now)
        .map(|(k, _)| k.clone())
        .collect();
    for k in gone {
        spec.secret_files.remove(&k);
        spec.env.remove(&k);
        spec.secret_expire_times.remove(&k);
    }
}

/// The spec a sandbox was built from, kept for Start after Stop.
pub(super) fn read_spec(layout: &Layout) -> anyhow::Result<wpb::SandboxSpec> {
    let bytes = std::fs::read(layout.dir.join("spec.bin"))
        .map_err(|e| anyhow::anyhow!("the sandbox's spec: {e}"))?;
    Ok(prost::Message::decode(bytes.as_slice())?)
}

/// Keeps a sandbox's spec (it holds its environment and secrets: root's).
pub(super) fn keep_spec(layout: &Layout, spec: &wpb::SandboxSpec) -> anyhow::Result<()> {
    write_private(
        &layout.dir.join("spec.bin"),
        &prost::Message::encode_to_vec(spec),
    )
}

impl SandboxHost {
    /// Replaces a sandbox's secrets with the control plane's current ones.
    pub async fn update_secrets(
        &self,
        id: &str,
        generation: i64,
        u: &wpb::UpdateSecretsCommand,
    ) -> anyhow::Result<wpb::SandboxStatus> {
        let lock = self.lock(id).await;
        let _g = lock.lock().await;
        let mut h = self.fenced(id, generation).await?;
        if u.revision < h.secrets_revision {
            tracing::debug!(sandbox = %id, revision = u.revision, "an older secrets update ignored");
            return Ok(Self::status(&h, ""));
        }
        h.secrets_revision = u.revision;
        let layout = self.layout(id);
        let mut spec = read_spec(&layout)?;
        let before = spec.env.clone();
        spec.env = u.env.clone();
        spec.secret_files = u.secret_files.clone();
        spec.secret_expire_times = u.secret_expire_times.clone();
        self.apply_secrets(&layout, &mut h, spec, &before).await?;
        Ok(Self::status(&h, ""))
    }

    /// Removes expired secrets from the sandboxes holding them; run on
    /// the worker's watch tick (every 2 s).
    pub async fn expire_secrets(&self) {
        let now = now_ms();
        for (id, h) in self.held_dirs() {
            if id != h.sandbox_id || h.secrets_expire_at.is_none_or(|t| t > now) {
                continue;
            }
            let lock = self.lock(&id).await;
            let _g = lock.lock().await;
            // Again under the lock: a command may have changed it.
            let Some(mut h) = self
                .held(&id)
                .filter(|h| h.secrets_expire_at.is_some_and(|t| t <= now))
            else {
                continue;
            };
            let layout = self.layout(&id);
            let r = match read_spec(&layout) {
                Ok(spec) => {
                    let before = spec.env.clone();
                    self.apply_secrets(&layout, &mut h, spec, &before).await
                }
                Err(e) => Err(e),
            };
            match r {
                Ok(()) => tracing::info!(sandbox = %id, "expired secrets removed"),
                Err(e) => tracing::warn!(sandbox = %id, error = %e, "expired secrets"),
            }
        }
    }

    /// Applies a sandbox's changed secrets (`before`: the environment it
    /// had): the spec is kept for its next start; a running sandbox's
    /// tmpfs and its agent's environment change now, a paused one's
    /// agent hears of it when thawed.
    async fn apply_secrets(
        &self,
        layout: &Layout,
        h: &mut Held,
        mut spec: wpb::SandboxSpec,
        before: &std::collections::HashMap<String, String>,
    ) -> anyhow::Result<()> {
        drop_expired(&mut spec, now_ms());
        keep_spec(layout, &spec)?;
        h.secrets_expire_at = first_expiry(&spec);
        let live = matches!(h.state, SandboxPhase::Running | SandboxPhase::Paused);
        if live {
            if crate::rootfs::mounts_under(&layout.secrets()).contains(&layout.secrets()) {
                sync_secrets(layout, h.uid(), &spec.secret_files)?;
            } else if !spec.secret_files.is_empty() {
                // Built without a secrets tmpfs: its container has no
                // /run/secrets to change until it starts again.
                tracing::info!(sandbox = %h.sandbox_id, "secret files apply at the sandbox's next start");
            }
            let unset: Vec<String> = before
                .keys()
                .filter(|k| !spec.env.contains_key(*k))
                .cloned()
                .collect();
            if spec.env != *before {
                let mut pending = h.env_unset.take().unwrap_or_default();
                pending.extend(unset);
                h.env_unset = Some(pending);
            }
        }
        // Saved before the agent is told: a change it did not take stays
        // pending.
        self.save(h)?;
        if h.state == SandboxPhase::Running && h.env_unset.is_some() {
            self.configure_env(layout, h, &spec).await?;
            self.save(h)?;
        }
        Ok(())
    }

    /// Tells a running sandbox's agent the environment later processes
    /// get, when it changed since it was last told.
    pub(super) async fn configure_env(
        &self,
        layout: &Layout,
        h: &mut Held,
        spec: &wpb::SandboxSpec,
    ) -> anyhow::Result<()> {
        let Some(unset) = h.env_unset.clone() else {
            return Ok(());
        };
        let pid = self
            .pid_of(h)
            .await?
            .ok_or_else(|| anyhow::anyhow!("the sandbox's container is gone"))?;
        let peer = AgentPeer { pid, uid: h.uid() };
        let told = async {
            crate::agent_client(&layout.agent_socket(), peer)
                .await?
                .configure(talon_proto::talon::agent::v1::ConfigureRequest {
                    env: spec.env.clone(),
                    unset,
                })
                .await?;
            anyhow::Ok(())
        };
        // Bounded: the sweep that calls this also reaps dead sandboxes.
        tokio::time::timeout(AGENT_PATIENCE, told)
            .await
            .map_err(|_| anyhow::anyhow!("the agent did not answer Configure"))??;
        h.env_unset = None;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expired_secrets_leave_the_spec_and_the_rest_stay() {
        let now = 1_800_000_000_000;
        let mut spec = wpb::SandboxSpec::default();
        spec.env.insert("PLAIN".into(), "1".into());
        spec.env.insert("OLD_ENV".into(), "x".into());
        spec.env.insert("KEPT_ENV".into(), "y".into());
        spec.secret_files.insert("OLD_FILE".into(), b"a".to_vec());
        spec.secret_files.insert("KEPT_FILE".into(), b"b".to_vec());
        let at = |ms| talon_core::time::ms_to_timestamp(ms);
        spec.secret_expire_times
            .insert("OLD_ENV".into(), at(now - 1));
        spec.secret_expire_times.insert("OLD_FILE".into(), at(now));
        spec.secret_expire_times
            .insert("KEPT_ENV".into(), at(now + 5_000));
        assert_eq!(first_expiry(&spec), Some(now - 1));
        drop_expired(&mut spec, now);
        let mut env: Vec<_> = spec.env.keys().cloned().collect();
        env.sort();
        assert_eq!(env, ["KEPT_ENV", "PLAIN"]);
        assert_eq!(spec.secret_files.keys().collect::<Vec<_>>(), ["KEPT_FILE"]);
        assert_eq!(first_expiry(&spec), Some(now + 5_000));
    }
}
