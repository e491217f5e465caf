//! Building, booting, freezing, stopping, starting and removing
//! sandboxes through the runtime.

use super::agent_bin::*;
use super::prepare::*;
use super::*;
use crate::agent_socket::AgentPeer;
use crate::bundle::{self, BundleSpec, Layout, Limits, RootKind};
use crate::net::Egress;
use crate::pool::Shape;
use crate::rootfs::{self};
use crate::runtime::{ContainerStatus, Isolation};
use std::collections::BTreeMap;
use std::time::Duration;
use talon_core::image::HOST_IMAGE;
use talon_proto::talon::worker::v1 as wpb;
use talon_proto::v1::SandboxState;

impl SandboxHost {
    /// Builds and starts a sandbox, or claims a pooled one of its shape.
    /// A command of an older generation than the one held is refused
    /// (fencing).
    pub async fn create(
        &self,
        id: &str,
        generation: i64,
        spec: &wpb::SandboxSpec,
    ) -> anyhow::Result<wpb::SandboxStatus> {
        if !valid_id(id) || id.starts_with(POOL_PREFIX) {
            return Err(WorkerError::InvalidId(id.to_string()).into());
        }
        // A level this worker cannot run is refused before anything else.
        self.runtime_for(
            Isolation::from_proto(spec.isolation)
                .map_err(|e| WorkerError::Invalid(e.to_string()))?,
        )?;
        let _live = self.pool.live();
        let lock = self.lock(id).await;
        let _g = lock.lock().await;
        if self.deleted_since(id, generation) {
            return Err(WorkerError::Deleted {
                id: id.to_string(),
                generation,
            }
            .into());
        }
        let held = match self.record(id) {
            Ok(h) => Some(h),
            Err(WorkerError::NotHere(_)) => None,
            Err(e) => return Err(e.into()),
        };
        if let Some(h) = held {
            fence(id, h.generation, generation, Fence::AtLeast)?;
            if h.generation == generation && h.state == SandboxPhase::Running {
                return Ok(Self::status(&h, ""));
            }
            self.teardown(id).await?;
        }
        if let Some(pooled) = self.pool.take(&Shape::of(spec)) {
            match self.claim(id, generation, spec, &pooled).await {
                Ok(status) => {
                    self.pool.hit();
                    return Ok(status);
                }
                Err(e) => {
                    tracing::warn!(sandbox = %id, pooled = %pooled, error = %e, "could not claim a pooled sandbox; building one");
                    let _ = self.teardown(&pooled).await;
                    let _ = self.teardown(id).await;
                }
            }
        }
        self.pool.miss();
        self.build(id, generation, spec, None).await
    }

    /// Builds a sandbox from nothing: `pooled` for one the pool keeps.
    pub(super) async fn build(
        &self,
        id: &str,
        generation: i64,
        spec: &wpb::SandboxSpec,
        pooled: Option<Shape>,
    ) -> anyhow::Result<wpb::SandboxStatus> {
        let mut seeds = Vec::new();
        let image = if spec.image.is_empty() || spec.image == HOST_IMAGE {
            None
        } else {
            let r = self.image_for(id, &spec.image).await?;
            seeds = r.seeds;
            (!r.host_root).then_some(HeldImage {
                name: r.name,
                digest: r.digest,
                layers: r.layers,
                mode: self.rootfs_mode,
                config: r.config,
            })
        };
        let layout = self.layout(id);
        // The slot (uid range, address) is taken and recorded under one
        // host-wide lock: two creates at once must never share one.
        let h = {
            let _slots = self.slots.lock().await;
            let h = Held {
                format: STATE_FORMAT,
                sandbox_id: id.into(),
                generation,
                slot: self.free_slot(),
                state: SandboxPhase::Starting,
                image,
                egress: crate::net::egress_from_proto(spec.network_policy.as_ref())?,
                isolation: Isolation::from_proto(spec.isolation)?,
                container: None,
                pooled,
                init: None,
                secrets_expire_at: None,
                env_unset: None,
                secrets_revision: 0,
                idle_timeout_ms: None,
                move_on_loss: spec.move_on_worker_loss,
                container_gone: false,
            };
            let saved = sandbox_dir(&layout.dir).and_then(|()| self.save(&h));
            if let Err(e) = saved {
                let _ = self.teardown(id).await;
                return Err(e);
            }
            h
        };
        let uid = h.uid();
        let nameserver = self.net.get().map(|n| n.gateway());
        let prepared = self
            .mount_disk(&layout, uid, spec, h.generation)
            .and_then(|fresh| {
                prepare(
                    &layout,
                    uid,
                    h.image.as_ref(),
                    &self.images,
                    nameserver,
                    h.isolation,
                    fresh,
                )?;
                // Only into a new disk: a moved sandbox's disk holds what
                // it wrote since (laid again, it was lost).
                match fresh {
                    true => self.lay_seeds(&layout, uid, &seeds),
                    false => Ok(()),
                }
            });
        if let Err(e) = prepared {
            let _ = self.teardown(id).await;
            return Err(e);
        }
        self.boot(&layout, id, uid, spec, h).await
    }

    pub(super) async fn boot(
        &self,
        layout: &Layout,
        id: &str,
        uid: u32,
        spec: &wpb::SandboxSpec,
        mut h: Held,
    ) -> anyhow::Result<wpb::SandboxStatus> {
        let r = spec.resources.unwrap_or_default();
        let env: BTreeMap<String, String> = spec.env.clone().into_iter().collect();
        let root = h
            .image
            .as_ref()
            .map_or(RootKind::Host, HeldImage::root_kind);
        let image_env = h
            .image
            .as_ref()
            .map(|i| i.config.env.clone())
            .unwrap_or_default();
        // A pooled sandbox gets its secrets at the claim.
        let has_secrets = !spec.secret_files.is_empty() || h.pooled.is_some();
        let runtime = self.runtime_for(h.isolation)?.clone();
        let oci = bundle::spec(&BundleSpec {
            sandbox_id: id,
            layout,
            uid_base: uid,
            limits: Limits {
                cpu_millis: r.cpu_millis,
                memory_mib: r.memory_mib,
                max_pids: r.max_pids,
            },
            env: &env,
            root,
            image_env: &image_env,
            agent: &self.agent,
            agent_options: self.agent_options,
            has_secret_files: has_secrets,
            masked_eq: runtime.masked_eq(),
            isolation: h.isolation,
            cgroup_parent: &self.cgroup_parent,
            volumes: &spec
                .volumes
                .iter()
                .map(|v| (v.volume_id.clone(), v.path.clone(), v.read_only))
                .collect::<Vec<_>>(),
        })?;
        // It holds the sandbox's environment, secrets included: root's.
        write_private(
            &layout.bundle().join("config.json"),
            &serde_json::to_vec(&oci)?,
        )?;
        let dests: Vec<&str> = oci
            .mounts()
            .iter()
            .flatten()
            .filter_map(|m| m.destination().to_str())
            .collect();
        // A new container, named by the sandbox (a claimed pool container
        // was removed when the sandbox stopped).
        h.container = None;
        let t0 = std::time::Instant::now();
        let mut phases: Vec<(&str, Duration)> = Vec::new();
        let mut mark = |name, t: &mut std::time::Instant| {
            phases.push((name, t.elapsed()));
            *t = std::time::Instant::now();
        };
        let started = async {
            let mut t = std::time::Instant::now();
            self.mount_disk(layout, uid, spec, h.generation)?;
            if root == RootKind::Host {
                ensure_home(layout, uid)?;
            }
            if has_secrets {
                mount_secrets(layout, uid)?;
                sync_secrets(layout, uid, &spec.secret_files)?;
            }
            self.mount_root(layout, uid, &h)?;
            self.mount_volumes(layout, id, uid, h.generation, &spec.volumes)?;
            self.volume_mount_points(layout, root, h.isolation, uid, &spec.volumes)?;
            rootfs::check_mount_points(&layout.rootfs(), &dests)?;
            mark("mount", &mut t);
            // Bound here, listened on by the agent: see agent_socket. Under
            // gVisor the agent binds its own in a directory of the
            // sandbox's root.
            let (socket, path) = match h.isolation {
                Isolation::Container => (
                    Some(crate::agent_socket::bind(&layout.agent_socket())?),
                    layout.agent_socket(),
                ),
                Isolation::Gvisor => {
                    agent_dir(layout, uid)?;
                    (None, layout.agent_uds())
                }
            };
            if h.isolation == Isolation::Container {
                crate::ns::new_userns(layout.userns(), uid, bundle::ID_RANGE).await?;
            }
            // gVisor's netstack takes the links it finds at its start: the
            // namespace and its link are made first.
            if h.isolation == Isolation::Gvisor {
                let ns = crate::net::NetNs::File(layout.netns());
                if !rootfs::mounts_under(&layout.netns()).contains(&layout.netns()) {
                    crate::ns::new_netns(layout.netns()).await?;
                }
                // gVisor's netstack takes lo as it finds it too.
                crate::net::link::loopback_up(&ns).await?;
                match self.net.get() {
                    Some(net) if !matches!(h.egress, Egress::Deny) => {
                        net.attach(id, h.slot, &ns, &h.egress).await?;
                        mark("network", &mut t);
                    }
                    _ => {}
                }
            }
            let pid = runtime.run(id, &layout.bundle(), socket.as_ref()).await?;
            drop(socket);
            h.init = start_time(pid).map(|s| (pid, s));
            mark("run", &mut t);
            // Loopback always works, whatever the network and policy (an
            // attached link brings it up with eth0). gVisor's netstack
            // has its own loopback, and its link is in place already.
            match self.net.get() {
                _ if h.isolation == Isolation::Gvisor => {}
                Some(net) if !matches!(h.egress, Egress::Deny) => {
                    net.attach(id, h.slot, &crate::net::NetNs::Pid(pid), &h.egress)
                        .await?;
                    mark("network", &mut t);
                }
                _ => {
                    crate::net::link::loopback_up(&crate::net::NetNs::Pid(pid)).await?;
                    mark("loopback", &mut t);
                }
            }
            let server = runtime.agent_server(id, pid).await?;
            wait_for_agent(&path, AgentPeer { pid: server, uid }).await?;
            mark("agent", &mut t);
            anyhow::Ok(())
        };
        if let Err(e) = started.await {
            let _ = runtime.delete(id).await;
            self.detach_network(&h).await;
            let _ = rootfs::unmount_under(&layout.dir);
            h.state = SandboxPhase::Failed;

            self.save(&h)?;
            return Err(e);
        }
        tracing::debug!(sandbox = %id, total = ?t0.elapsed(), ?phases, "sandbox started");
        h.state = if h.pooled.is_some() {
            SandboxPhase::Pooled
        } else {
            SandboxPhase::Running
        };
        h.secrets_expire_at = first_expiry(spec);
        h.idle_timeout_ms = idle_limit(spec);
        h.move_on_loss = spec.move_on_worker_loss;
        h.container_gone = false;
        h.env_unset = None;
        self.touch(id);
        self.save(&h)?;
        keep_spec(layout, spec)?;
        Ok(Self::status(&h, ""))
    }

    pub async fn pause(&self, id: &str, generation: i64) -> anyhow::Result<wpb::SandboxStatus> {
        self.set_frozen(id, generation, true).await
    }

    pub async fn resume(&self, id: &str, generation: i64) -> anyhow::Result<wpb::SandboxStatus> {
        self.set_frozen(id, generation, false).await
    }

    /// Freezes or thaws the sandbox's cgroup through the runtime.
    pub(super) async fn set_frozen(
        &self,
        id: &str,
        generation: i64,
        frozen: bool,
    ) -> anyhow::Result<wpb::SandboxStatus> {
        let lock = self.lock(id).await;
        let _g = lock.lock().await;
        let mut h = self.fenced(id, generation).await?;
        if frozen {
            self.runtime_for(h.isolation)?.pause(h.cid()).await?;
        } else {
            self.runtime_for(h.isolation)?.resume(h.cid()).await?;
        }
        h.state = if frozen {
            SandboxPhase::Paused
        } else {
            // A frozen agent's idle clock ran on: the thaw counts.
            self.touch(id);
            SandboxPhase::Running
        };
        // Its environment changed while it was frozen: its agent hears now.
        if !frozen && h.env_unset.is_some() {
            let layout = self.layout(id);
            let told = match read_spec(&layout) {
                Ok(spec) => self.configure_env(&layout, &mut h, &spec).await,
                Err(e) => Err(e),
            };
            if let Err(e) = told {
                tracing::warn!(sandbox = %id, error = %e, "the thawed agent's environment");
            }
        }
        self.save(&h)?;
        Ok(Self::status(&h, ""))
    }

    /// Stops every process (the container goes), keeping the directories.
    pub async fn stop(&self, id: &str, generation: i64) -> anyhow::Result<wpb::SandboxStatus> {
        let lock = self.lock(id).await;
        let _g = lock.lock().await;
        let mut h = self.fenced(id, generation).await?;
        self.remove_container(h.cid(), h.isolation).await?;
        self.detach_network(&h).await;
        // Its root, its disk and its secrets: mounted again at start.
        rootfs::unmount_under(&self.layout(id).dir)?;

        h.state = SandboxPhase::Stopped;
        h.init = None;
        // Its next start boots with the spec's environment.
        h.env_unset = None;
        self.save(&h)?;
        Ok(Self::status(&h, ""))
    }

    /// Starts a stopped sandbox again, under `egress` when given (the
    /// server's policy, which may have changed while it was stopped).
    pub async fn start(
        &self,
        id: &str,
        generation: i64,
        egress: Option<Egress>,
    ) -> anyhow::Result<wpb::SandboxStatus> {
        let lock = self.lock(id).await;
        let _g = lock.lock().await;
        let mut h = self.fenced(id, generation).await?;
        // Started already (a start asked twice: a retry, a registration's
        // follow-up): it runs, and says so.
        if h.state == SandboxPhase::Running && self.container_alive(&h).await {
            return Ok(Self::status(&h, ""));
        }
        if let Some(e) = egress {
            h.egress = e;
        }
        let layout = self.layout(id);
        if h.state == SandboxPhase::Failed {
            // Whatever its death or its failed start left: its container,
            // its mounts. Its disk stays.
            let _ = self.remove_container(h.cid(), h.isolation).await;
            self.detach_network(&h).await;
            rootfs::unmount_under(&layout.dir)?;
            h.init = None;
        }
        let mut spec = match read_spec(&layout) {
            Ok(spec) => spec,
            Err(e) if h.state == SandboxPhase::Failed => anyhow::bail!(
                "sandbox {id} has no workspace to start from (it failed before its first start: {e:#}); delete it and create another"
            ),
            Err(e) => return Err(e),
        };
        drop_expired(&mut spec, talon_core::time::now_ms());
        self.boot(&layout, id, h.uid(), &spec, h).await
    }

    /// Fencing: stops and forgets the sandboxes `scope` covers (see
    /// `fenced_at`: those another worker could start), because this
    /// worker's lease lapsed and the control plane may start them
    /// elsewhere. Their containers are killed and their local files
    /// removed; a shared disk is unmounted and let go, never removed (the
    /// next worker starts from it). The others run on untouched. Returns
    /// what it stopped, as reports for the control plane (`fenced`).
    pub async fn fence_all(&self, scope: wpb::FenceScope) -> Vec<wpb::SandboxStatus> {
        let targets: Vec<Held> = self
            .all_held()
            .into_iter()
            .filter(|h| self.fenced_at(h, scope))
            .collect();
        // Every one stopped at once first, as the fence keeper would (its
        // cgroup's processes killed, its disk written out and let go): the
        // slower teardown below must not leave the last one running while
        // another worker starts it.
        for h in &targets {
            crate::keeper::kill_sandbox(&self.cgroup_parent, h.cid());
            if let Err(e) = rootfs::unmount_under(&self.layout(&h.sandbox_id).dir) {
                tracing::error!(sandbox = %h.sandbox_id, error = %e, "could not unmount a fenced sandbox's disk");
            }
        }
        let mut out = Vec::new();
        for h in targets {
            let lock = self.lock(&h.sandbox_id).await;
            let _g = lock.lock().await;
            match self.teardown(&h.sandbox_id).await {
                Ok(()) => {
                    let mut s = Self::status(&h, "stopped: this worker's lease lapsed");
                    s.state = SandboxState::Stopped as i32;
                    s.fenced = true;
                    out.push(s);
                }
                Err(e) => {
                    tracing::error!(sandbox = %h.sandbox_id, error = %e, "could not fence a sandbox")
                }
            }
        }
        out
    }

    /// Removes a volume's files from the shared storage (the control plane
    /// deletes only a volume no sandbox holds).
    pub fn delete_volume(&self, volume_id: &str) -> anyhow::Result<()> {
        match &self.shared {
            Some(s) => s.remove_volume(volume_id),
            None => anyhow::bail!("this worker is not on the shared workspace backend"),
        }
    }

    /// The workspace backend: `shared` or `local`.
    pub fn workspace_backend(&self) -> &'static str {
        if self.shared.is_some() {
            "shared"
        } else {
            "local"
        }
    }

    /// Removes the container and every file of the sandbox. Deleting what
    /// is not here succeeds: it is already gone.
    pub async fn delete(&self, id: &str, generation: i64) -> anyhow::Result<wpb::SandboxStatus> {
        self.remove(id, generation, true).await
    }

    /// Lets go of a sandbox that moved to another worker: as `delete`, but
    /// its disk on shared storage is the new worker's and stays.
    pub async fn let_go(&self, id: &str, generation: i64) -> anyhow::Result<wpb::SandboxStatus> {
        self.remove(id, generation, false).await
    }

    async fn remove(
        &self,
        id: &str,
        generation: i64,
        shared_disk: bool,
    ) -> anyhow::Result<wpb::SandboxStatus> {
        if !valid_id(id) {
            return Err(WorkerError::InvalidId(id.to_string()).into());
        }
        let lock = self.lock(id).await;
        let _g = lock.lock().await;
        // A record that doesn't read is removed all the same: deleting is
        // how it is recovered from.
        if let Ok(h) = self.record(id) {
            fence(id, h.generation, generation, Fence::AtLeast)?;
        }
        self.deleted
            .lock()
            .expect("tombstones")
            .insert(id.to_string(), (generation, std::time::Instant::now()));
        self.teardown(id).await?;
        if let Some(shared) = self.shared.as_ref().filter(|_| shared_disk) {
            shared.remove(id, generation)?;
        }
        self.locks.lock().await.remove(id);
        Ok(wpb::SandboxStatus {
            sandbox_id: id.into(),
            generation,
            state: SandboxState::Deleted as i32,

            message: String::new(),
            fenced: false,
            container_gone: false,
        })
    }

    /// Kills a container (thawed first: a frozen one cannot die) and
    /// removes it from the runtime.
    pub(super) async fn remove_container(&self, cid: &str, level: Isolation) -> anyhow::Result<()> {
        let runtime = self.runtime_for(level)?;
        if runtime.status(cid).await? == Some(ContainerStatus::Paused) {
            let _ = runtime.resume(cid).await;
        }
        let _ = runtime.kill(cid, "KILL").await;
        runtime.delete(cid).await
    }

    pub(super) async fn teardown(&self, id: &str) -> anyhow::Result<()> {
        let held = self.held(id);
        match &held {
            Some(h) => self.remove_container(h.cid(), h.isolation).await?,
            // No record: whichever runtime may know it.
            None => {
                for level in self.isolation_levels() {
                    self.remove_container(id, level).await?;
                }
            }
        }
        let dir = self.layout(id).dir;
        if let Some(h) = &held {
            self.detach_network(h).await;
        }
        let image = held.and_then(|h| h.image);
        // Nothing is removed while anything is mounted under the sandbox.
        rootfs::unmount_under(&dir)?;
        if dir.exists() {
            std::fs::remove_dir_all(&dir)?;
        }
        // A shared disk stays on shared storage (a delete removes it, at
        // its generation).
        self.forget_record(id);
        // The layers of an image deleted while this sandbox used it.
        if image.is_some_and(|i| {
            self.images
                .get(&i.name)
                .is_none_or(|r| r.layers != i.layers)
        }) {
            self.images.gc(&self.layers_in_use())?;
        }
        Ok(())
    }
}
