//! The sandboxes of this worker: their directories, their state on disk,
//! and the runtime calls that build, freeze, stop and remove them. The
//! state file of each sandbox is what a restarted worker re-adopts from.

use crate::agent_socket::AgentPeer;
use crate::bundle::{self, BundleSpec, Layout, Limits, RootKind};
use crate::image::ImageStore;
use crate::image::archive::ImageConfig;
use crate::net::{Egress, NetOptions, Network};
use crate::pool::{Pool, PoolOptions, Shape};
use crate::rootfs::{self, RootfsMode};
use crate::runtime::{ContainerStatus, Runtime};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::collections::{BTreeMap, HashMap};
use std::os::unix::fs::{PermissionsExt, chown};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use talon_core::image::HOST_IMAGE;
use talon_proto::talon::worker::v1 as wpb;
use talon_proto::v1::SandboxState;
use tokio::sync::Mutex;

/// The first host uid given to sandboxes; each takes a range of 65536.
pub const UID_BASE: u32 = 1_000_000;
/// Pooled sandboxes' ids start so; a create may not use one.
pub use talon_core::ids::POOL_PREFIX;
/// How long a new sandbox's agent has to answer.
pub const AGENT_READY_TIMEOUT: Duration = Duration::from_secs(20);

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Held {
    pub sandbox_id: String,
    pub generation: i64,
    pub slot: u32,
    /// "running", "paused" or "stopped", as this worker last left it.
    pub state: String,
    /// The imported image it was built from; None for `host`. Kept here
    /// so it restarts, and its layers stay, after the image is deleted.
    #[serde(default)]
    pub image: Option<HeldImage>,
    /// Its egress policy; what it was created with until changed (`open`
    /// in a state file older than networking).
    #[serde(default)]
    pub egress: Egress,
    /// The runtime's name for its container (and its cgroup's and nft
    /// chain's), when not the sandbox id: a sandbox claimed from the pool
    /// keeps the container it was built as until it is restarted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
    /// Set while the sandbox waits in the prewarm pool, unclaimed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pooled: Option<Shape>,
    /// The container's init: host pid and start time (clock ticks since
    /// boot), so it can be found without asking the runtime, and a pid
    /// reused by another process is never taken for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init: Option<(u32, u64)>,
}

impl Held {
    /// The container's id in the runtime (and the network's name for it).
    pub fn cid(&self) -> &str {
        self.container.as_deref().unwrap_or(&self.sandbox_id)
    }

    /// The host uid of the sandbox's root: the first of its slot's range.
    pub fn uid(&self) -> u32 {
        UID_BASE + self.slot * bundle::ID_RANGE
    }

    /// The recorded init pid, if that process is still the one recorded.
    fn live_init(&self) -> Option<u32> {
        let (pid, start) = self.init?;
        (start_time(pid) == Some(start)).then_some(pid)
    }
}

/// A process's start time (field 22 of /proc/PID/stat).
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces; fields after it don't.
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(19)?
        .parse()
        .ok()
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HeldImage {
    pub name: String,
    pub digest: String,
    pub layers: Vec<String>,
    pub mode: RootfsMode,
    pub config: ImageConfig,
}

impl HeldImage {
    fn root_kind(&self) -> RootKind {
        match self.mode {
            RootfsMode::Overlay => RootKind::Overlay,
            RootfsMode::Hardlink => RootKind::ReadOnlyImage,
        }
    }
}

/// How a worker builds sandboxes; every field has a default.
#[derive(Clone, Debug)]
pub struct HostOptions {
    /// How an imported image becomes a root filesystem.
    pub rootfs_mode: RootfsMode,
    /// Most bytes an imported image may unpack to.
    pub max_image_bytes: u64,
    /// Sandbox networking; None gives sandboxes loopback only. The worker
    /// enables it at start ([`SandboxHost::enable_network`]).
    pub network: Option<NetOptions>,
    /// The prewarm pool; size 0 turns it off.
    pub pool: PoolOptions,
    /// Sandbox disks: default size, minimum, inode ratio.
    pub disk: crate::disk::DiskOptions,
}

impl Default for HostOptions {
    fn default() -> Self {
        HostOptions {
            rootfs_mode: RootfsMode::Overlay,
            max_image_bytes: 32 << 30,
            network: None,
            pool: PoolOptions {
                size: 0,
                ..Default::default()
            },
            disk: Default::default(),
        }
    }
}

pub struct SandboxHost {
    root: PathBuf,
    runtime: Arc<dyn Runtime>,
    agent: PathBuf,
    images: Arc<ImageStore>,
    rootfs_mode: RootfsMode,
    /// One lock per sandbox, so commands for one sandbox run in order.
    locks: Mutex<HashMap<String, Arc<Mutex<()>>>>,
    /// Sandbox networking, once enabled; without it sandboxes have lo only.
    net: std::sync::OnceLock<Arc<Network>>,
    /// Held while a new sandbox takes its slot.
    slots: Mutex<()>,
    /// Sandboxes built ahead, claimed by creates of their shape.
    pool: Arc<Pool>,
    /// Where sandbox disks come from.
    disks: crate::disk::Templates,
    /// Sandboxes deleted lately, with the generation deleted: a create of
    /// that generation or older that arrives after its delete (commands
    /// run concurrently) is refused instead of building a sandbox nobody
    /// knows.
    deleted: std::sync::Mutex<HashMap<String, (i64, std::time::Instant)>>,
}

/// How long a delete is remembered against a late create.
const TOMBSTONE_TTL: Duration = Duration::from_secs(600);

use talon_core::ids::valid_sandbox_id as valid_id;

fn state_pb(s: &str) -> SandboxState {
    match s {
        "running" => SandboxState::Running,
        "paused" => SandboxState::Paused,
        "stopped" => SandboxState::Stopped,
        _ => SandboxState::Failed,
    }
}

impl SandboxHost {
    /// `agent` is the talon-agent binary to seal a copy of.
    pub fn new(data_dir: &Path, runtime: Arc<dyn Runtime>, agent: &Path) -> anyhow::Result<Self> {
        Self::with_options(data_dir, runtime, agent, HostOptions::default())
    }

    pub fn with_options(
        data_dir: &Path,
        runtime: Arc<dyn Runtime>,
        agent: &Path,
        opts: HostOptions,
    ) -> anyhow::Result<Self> {
        let root = data_dir.join("sandboxes");
        std::fs::create_dir_all(&root)?;
        std::fs::set_permissions(data_dir, std::fs::Permissions::from_mode(0o711))?;
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o711))?;
        traversable(&root)?;
        let sealed = seal_agent(data_dir, agent)?;
        let images = ImageStore::new(data_dir, opts.max_image_bytes)?;
        let disks = crate::disk::Templates::new(data_dir.join("disk-templates"), opts.disk)?;
        Ok(SandboxHost {
            root,
            runtime,
            agent: sealed,
            images: Arc::new(images),
            rootfs_mode: opts.rootfs_mode,
            locks: Mutex::new(HashMap::new()),
            net: std::sync::OnceLock::new(),
            slots: Mutex::new(()),
            pool: Arc::new(Pool::new(opts.pool)),
            disks,
            deleted: std::sync::Mutex::new(HashMap::new()),
        })
    }

    /// Gives sandboxes a network: sets up the bridge, the tables and the
    /// resolver, re-attaches the sandboxes held here (a restarted worker)
    /// and removes links and rules that no held sandbox owns.
    pub async fn enable_network(&self, opts: NetOptions) -> anyhow::Result<Arc<Network>> {
        anyhow::ensure!(self.net.get().is_none(), "the network is already enabled");
        let net = Network::start(opts).await?;
        let _ = self.net.set(net.clone());
        let mut keep = HashMap::new();
        for h in self.all_held() {
            if !matches!(h.state.as_str(), "running" | "paused" | "pooled") {
                continue;
            }
            let lock = self.lock(&h.sandbox_id).await;
            let _g = lock.lock().await;
            if let Ok(Some(pid)) = self.pid_of(&h).await {
                if let Err(e) = net.adopt(h.cid(), h.slot, pid, &h.egress).await {
                    tracing::warn!(sandbox = %h.sandbox_id, error = %e, "could not re-attach the sandbox's network");
                }
                keep.insert(h.cid().to_string(), h.slot);
            }
        }
        net.sweep(&keep).await?;
        Ok(net)
    }

    /// Replaces a sandbox's egress policy; a running or paused sandbox
    /// gets it at once, a stopped one when it starts.
    pub async fn update_network_policy(
        &self,
        id: &str,
        generation: i64,
        policy: Egress,
    ) -> anyhow::Result<wpb::SandboxStatus> {
        let lock = self.lock(id).await;
        let _g = lock.lock().await;
        let mut h = self.fenced(id, generation).await?;
        let live = h.state == "running" || h.state == "paused";
        match self.net.get() {
            Some(net) if live => {
                let pid = self
                    .pid_of(&h)
                    .await?
                    .ok_or_else(|| anyhow::anyhow!("the sandbox's container is gone"))?;
                net.update(h.cid(), h.slot, pid, &h.egress, &policy).await?;
            }
            Some(_) => {}
            None if matches!(policy, Egress::Deny | Egress::Sealed) => {}
            None => anyhow::bail!(
                "this worker runs sandboxes without a network (--network none): only sealed and deny can be enforced"
            ),
        }
        h.egress = policy;
        self.save(&h)?;
        Ok(Self::status(&h, ""))
    }

    pub fn images(&self) -> &Arc<ImageStore> {
        &self.images
    }

    /// The images sandboxes can be built from here, `host` first.
    pub fn image_names(&self) -> Vec<String> {
        std::iter::once(HOST_IMAGE.to_string())
            .chain(self.images.list().into_iter().map(|i| i.name))
            .collect()
    }

    /// Layers (and flattened trees) that sandboxes held here still use.
    pub fn layers_in_use(&self) -> HashSet<String> {
        let mut out = HashSet::new();
        for h in self.all_held() {
            if let Some(i) = h.image {
                out.insert(format!("flat:{}", crate::image::flat_name(&i.layers)));
                out.extend(i.layers);
            }
        }
        out
    }

    /// Forgets an image; layers in use by sandboxes stay until they go.
    pub fn delete_image(&self, name: &str) -> std::io::Result<bool> {
        self.images.delete(name, &self.layers_in_use())
    }

    fn all_held(&self) -> Vec<Held> {
        self.held_dirs().into_iter().map(|(_, h)| h).collect()
    }

    /// Every sandbox directory with the record in it: (directory name,
    /// record). The name is the sandbox id but mid-claim.
    fn held_dirs(&self) -> Vec<(String, Held)> {
        std::fs::read_dir(&self.root)
            .map(|d| {
                d.flatten()
                    .filter_map(|e| {
                        let name = e.file_name().to_string_lossy().into_owned();
                        self.held(&name).map(|h| (name, h))
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether a sandbox's image is still here with the layers it was
    /// built from (an image imported again under its name has others).
    fn image_current(&self, h: &Held) -> bool {
        h.image.as_ref().is_none_or(|i| {
            self.images
                .get(&i.name)
                .is_some_and(|r| r.layers == i.layers)
        })
    }

    pub fn runtime_name(&self) -> &str {
        self.runtime.name()
    }

    fn layout(&self, id: &str) -> Layout {
        Layout {
            dir: self.root.join(id),
        }
    }

    /// Where a held sandbox's agent answers, and who must answer there:
    /// its init, as its root (`agent_socket` checks both on connecting).
    pub async fn agent_endpoint(&self, h: &Held) -> anyhow::Result<(PathBuf, AgentPeer)> {
        anyhow::ensure!(valid_id(&h.sandbox_id), "invalid sandbox id");
        let pid = self
            .pid_of(h)
            .await?
            .ok_or_else(|| anyhow::anyhow!("the sandbox's container is gone"))?;
        Ok((
            self.layout(&h.sandbox_id).agent_socket(),
            AgentPeer { pid, uid: h.uid() },
        ))
    }

    /// A client of the agent of the sandbox `id`.
    pub async fn agent(&self, id: &str) -> anyhow::Result<crate::AgentClient> {
        let h = self
            .held(id)
            .ok_or_else(|| anyhow::anyhow!("sandbox {id} is not on this worker"))?;
        let (socket, peer) = self.agent_endpoint(&h).await?;
        crate::agent_client(&socket, peer).await
    }

    async fn lock(&self, id: &str) -> Arc<Mutex<()>> {
        self.locks
            .lock()
            .await
            .entry(id.to_string())
            .or_default()
            .clone()
    }

    pub fn held(&self, id: &str) -> Option<Held> {
        if !valid_id(id) {
            return None;
        }
        let s = std::fs::read_to_string(self.layout(id).dir.join("state.json")).ok()?;
        serde_json::from_str(&s).ok()
    }

    fn save(&self, h: &Held) -> anyhow::Result<()> {
        let dir = self.layout(&h.sandbox_id).dir;
        write_private(&dir.join("state.json"), &serde_json::to_vec(h)?)?;
        Ok(())
    }

    /// Every sandbox held here (pooled ones aside), as the records say,
    /// without asking the runtime: what the periodic reconcile sends.
    pub fn held_records(&self) -> Vec<wpb::SandboxStatus> {
        self.all_held()
            .into_iter()
            .filter(|h| h.pooled.is_none())
            .map(|h| Self::status(&h, ""))
            .collect()
    }

    /// Whether `id` was deleted at `generation` or later, lately.
    fn deleted_since(&self, id: &str, generation: i64) -> bool {
        let mut d = self.deleted.lock().expect("tombstones");
        d.retain(|_, (_, at)| at.elapsed() < TOMBSTONE_TTL);
        d.get(id).is_some_and(|(g, _)| *g >= generation)
    }

    /// Every sandbox this worker holds, with its state checked against the
    /// runtime: a container that died while we were away is reported
    /// failed, not running.
    pub async fn inventory(&self) -> Vec<wpb::SandboxStatus> {
        let mut out = Vec::new();
        let Ok(dir) = std::fs::read_dir(&self.root) else {
            return out;
        };
        for e in dir.flatten() {
            let id = e.file_name().to_string_lossy().into_owned();
            let Some(h) = self.held(&id) else { continue };
            // Pooled sandboxes are the worker's own until claimed.
            if h.pooled.is_some() {
                continue;
            }
            let actual = match self.runtime.status(h.cid()).await {
                Ok(Some(ContainerStatus::Running)) => "running",
                Ok(Some(ContainerStatus::Paused)) => "paused",
                Ok(_) if h.state == "stopped" => "stopped",
                _ => "failed",
            };
            out.push(wpb::SandboxStatus {
                sandbox_id: id,
                generation: h.generation,
                state: state_pb(actual) as i32,
                message: if actual == "failed" && h.state != "failed" {
                    "container is gone".into()
                } else {
                    String::new()
                },
            });
        }
        out
    }

    /// Finds running or paused sandboxes whose container is gone (its init
    /// died or was killed) and marks them failed, returning what changed.
    pub async fn reap_dead(&self) -> Vec<wpb::SandboxStatus> {
        let mut out = Vec::new();
        let Ok(dir) = std::fs::read_dir(&self.root) else {
            return out;
        };
        for e in dir.flatten() {
            let id = e.file_name().to_string_lossy().into_owned();
            let Some(h) = self.held(&id) else { continue };
            if !matches!(h.state.as_str(), "running" | "paused" | "pooled") {
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
            if !matches!(h.state.as_str(), "running" | "paused" | "pooled") {
                continue;
            }
            match self.runtime.status(h.cid()).await {
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
                    let _ = self.runtime.delete(h.cid()).await;
                    self.detach_network(&h).await;
                    h.state = "failed".into();
                    if self.save(&h).is_ok() {
                        out.push(Self::status(&h, "the sandbox's init process exited"));
                    }
                }
                Err(e) => tracing::warn!(sandbox = %id, error = %e, "runtime state unknown"),
            }
        }
        out
    }

    /// The host pid of a held sandbox's init: the recorded one while it
    /// lives (no runtime call), else the runtime's.
    /// None when its container is gone.
    async fn pid_of(&self, h: &Held) -> anyhow::Result<Option<u32>> {
        if let Some(pid) = h.live_init() {
            return Ok(Some(pid));
        }
        Ok(self
            .runtime
            .state(h.cid())
            .await?
            .map(|(_, pid)| pid)
            .filter(|pid| *pid > 0))
    }

    async fn detach_network(&self, h: &Held) {
        if let Some(net) = self.net.get()
            && let Err(e) = net.detach(h.cid(), h.slot).await
        {
            tracing::warn!(sandbox = %h.sandbox_id, error = %e, "could not remove the sandbox's network");
        }
    }

    fn status(h: &Held, message: &str) -> wpb::SandboxStatus {
        wpb::SandboxStatus {
            sandbox_id: h.sandbox_id.clone(),
            generation: h.generation,
            state: state_pb(&h.state) as i32,
            message: message.to_string(),
        }
    }

    fn free_slot(&self) -> u32 {
        let used: HashSet<u32> = self.all_held().into_iter().map(|h| h.slot).collect();
        (0..).find(|s| !used.contains(s)).expect("a free slot")
    }

    /// Builds and starts a sandbox, or claims a pooled one of its shape.
    /// A command of an older generation than the one held is refused
    /// (fencing).
    pub async fn create(
        &self,
        id: &str,
        generation: i64,
        spec: &wpb::SandboxSpec,
    ) -> anyhow::Result<wpb::SandboxStatus> {
        anyhow::ensure!(valid_id(id), "invalid sandbox id");
        anyhow::ensure!(!id.starts_with(POOL_PREFIX), "invalid sandbox id");
        let _live = self.pool.live();
        let lock = self.lock(id).await;
        let _g = lock.lock().await;
        anyhow::ensure!(
            !self.deleted_since(id, generation),
            "sandbox {id} was deleted (generation {generation})"
        );
        if let Some(h) = self.held(id) {
            anyhow::ensure!(
                generation >= h.generation,
                "stale generation {generation} < {}",
                h.generation
            );
            if h.generation == generation && h.state == "running" {
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
    async fn build(
        &self,
        id: &str,
        generation: i64,
        spec: &wpb::SandboxSpec,
        pooled: Option<Shape>,
    ) -> anyhow::Result<wpb::SandboxStatus> {
        let image = if spec.image.is_empty() || spec.image == HOST_IMAGE {
            None
        } else {
            let r = self
                .images
                .get(&spec.image)
                .ok_or_else(|| anyhow::anyhow!("image {:?} is not on this worker", spec.image))?;
            Some(HeldImage {
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
                sandbox_id: id.into(),
                generation,
                slot: self.free_slot(),
                state: "starting".into(),
                image,
                egress: crate::net::egress_from_proto(spec.network_policy.as_ref())?,
                container: None,
                pooled,
                init: None,
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
            .mount_disk(&layout, uid, spec)
            .and_then(|()| prepare(&layout, uid, h.image.as_ref(), &self.images, nameserver));
        if let Err(e) = prepared {
            let _ = self.teardown(id).await;
            return Err(e);
        }
        self.boot(&layout, id, uid, spec, h).await
    }

    /// Makes the pooled sandbox `pooled` the sandbox `id`: its directory
    /// is renamed (mounts move with it), the agent takes the sandbox's
    /// environment, the hostname is set, its secrets are written, and its
    /// network goes from the default policy to the sandbox's when that
    /// differs. The container keeps its name ([`Held::container`]).
    async fn claim(
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
            .filter(|h| h.pooled.is_some() && h.state == "pooled")
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
        std::fs::rename(self.layout(pooled).dir, &layout.dir)?;
        h.sandbox_id = id.into();
        h.container = Some(pooled.into());
        h.generation = generation;
        h.pooled = None;
        h.state = "claiming".into();
        self.save(&h)?;
        self.locks.lock().await.remove(pooled);
        let t_rename = t0.elapsed();
        write_secrets(&layout, h.uid(), &spec.secret_files)?;
        let mut env: HashMap<String, String> = spec.env.clone().into_iter().collect();
        env.insert("TALON_SANDBOX_ID".into(), id.into());
        let peer = AgentPeer { pid, uid: h.uid() };
        crate::agent_client(&layout.agent_socket(), peer)
            .await?
            .configure(talon_proto::talon::agent::v1::ConfigureRequest { env })
            .await?;
        let t_agent = t0.elapsed();
        set_hostname(pid, &id.chars().take(63).collect::<String>()).await?;
        let t_host = t0.elapsed();
        let egress = crate::net::egress_from_proto(spec.network_policy.as_ref())?;
        // Without a network a sandbox has loopback only, as a cold one.
        if let Some(net) = self.net.get()
            && egress != h.egress
        {
            net.update(h.cid(), h.slot, pid, &h.egress, &egress).await?;
        }
        let t_net = t0.elapsed();
        h.egress = egress;
        h.state = "running".into();
        self.save(&h)?;
        write_private(
            &layout.dir.join("spec.bin"),
            &prost::Message::encode_to_vec(spec),
        )?;
        tracing::debug!(sandbox = %id, total = ?t0.elapsed(), rename = ?t_rename, agent = ?t_agent, hostname = ?t_host, network = ?t_net, "pooled sandbox claimed");
        Ok(Self::status(&h, ""))
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

    async fn remove_pooled(&self, id: &str) -> anyhow::Result<()> {
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
            let leftover = h.pooled.is_some() || h.state == "claiming" || !named;
            if !leftover {
                continue;
            }
            let alive = matches!(
                self.runtime.status(h.cid()).await,
                Ok(Some(ContainerStatus::Running))
            );
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
                        && h.state == "pooled"
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

    /// Makes (once) and mounts the sandbox's disk (see `disk`); its top
    /// directory is the sandbox's root's alone, so no other host user
    /// reaches anything the sandbox wrote.
    fn mount_disk(&self, l: &Layout, uid: u32, spec: &wpb::SandboxSpec) -> anyhow::Result<()> {
        let image = l.disk_image();
        if !image.exists() {
            let asked = spec.resources.map_or(0, |r| r.disk_mib);
            let size = self.disks.options().size_mib(asked);
            self.disks.create(&image, size)?;
        }
        crate::disk::mount(&image, &l.disk())?;
        chown(l.disk(), Some(uid), Some(uid))?;
        std::fs::set_permissions(l.disk(), std::fs::Permissions::from_mode(0o700))?;
        Ok(())
    }

    /// Mounts an imported image's root (once: a restarted worker finds it
    /// still mounted) and checks its mount points.
    fn mount_root(&self, l: &Layout, uid: u32, h: &Held) -> anyhow::Result<()> {
        let Some(i) = &h.image else {
            return Ok(());
        };
        let rootfs = l.rootfs();
        if !rootfs::mounts_under(&rootfs).is_empty() {
            return Ok(());
        }
        match i.mode {
            RootfsMode::Overlay => {
                let lowers: Vec<PathBuf> =
                    i.layers.iter().map(|d| self.images.layer_dir(d)).collect();
                rootfs::mount_overlay(
                    &lowers,
                    &l.upper(),
                    &l.work(),
                    &rootfs,
                    uid,
                    bundle::ID_RANGE,
                )
            }
            RootfsMode::Hardlink => {
                let flat = self.images.flat(&i.layers)?;
                rootfs::mount_readonly(&flat, &rootfs, uid, bundle::ID_RANGE)
            }
        }
    }

    async fn boot(
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
            has_secret_files: has_secrets,
            masked_eq: self.runtime.masked_eq(),
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
            self.mount_disk(layout, uid, spec)?;
            if has_secrets {
                mount_secrets(layout, uid)?;
                write_secrets(layout, uid, &spec.secret_files)?;
            }
            self.mount_root(layout, uid, &h)?;
            rootfs::check_mount_points(&layout.rootfs(), &dests)?;
            mark("mount", &mut t);
            // Bound here, listened on by the agent: see agent_socket.
            let socket = crate::agent_socket::bind(&layout.agent_socket())?;
            let pid = self.runtime.run(id, &layout.bundle(), &socket).await?;
            drop(socket);
            h.init = start_time(pid).map(|s| (pid, s));
            mark("run", &mut t);
            // Loopback always works, whatever the network and policy (an
            // attached link brings it up with eth0).
            match self.net.get() {
                Some(net) if !matches!(h.egress, Egress::Deny) => {
                    net.attach(id, h.slot, pid, &h.egress).await?;
                    mark("network", &mut t);
                }
                _ => {
                    crate::net::link::loopback_up(pid).await?;
                    mark("loopback", &mut t);
                }
            }
            wait_for_agent(&layout.agent_socket(), AgentPeer { pid, uid }).await?;
            mark("agent", &mut t);
            anyhow::Ok(())
        };
        if let Err(e) = started.await {
            let _ = self.runtime.delete(id).await;
            self.detach_network(&h).await;
            let _ = rootfs::unmount_under(&layout.dir);
            h.state = "failed".into();

            self.save(&h)?;
            return Err(e);
        }
        tracing::debug!(sandbox = %id, total = ?t0.elapsed(), ?phases, "sandbox started");
        h.state = if h.pooled.is_some() {
            "pooled"
        } else {
            "running"
        }
        .into();
        self.save(&h)?;
        // Keep the spec for Start after Stop.
        write_private(
            &layout.dir.join("spec.bin"),
            &prost::Message::encode_to_vec(spec),
        )?;
        Ok(Self::status(&h, ""))
    }

    async fn fenced(&self, id: &str, generation: i64) -> anyhow::Result<Held> {
        let h = self
            .held(id)
            .ok_or_else(|| anyhow::anyhow!("sandbox {id} is not on this worker"))?;
        anyhow::ensure!(
            h.generation == generation,
            "stale generation {generation}, holding {}",
            h.generation
        );
        Ok(h)
    }

    pub async fn pause(&self, id: &str, generation: i64) -> anyhow::Result<wpb::SandboxStatus> {
        self.set_frozen(id, generation, true).await
    }

    pub async fn resume(&self, id: &str, generation: i64) -> anyhow::Result<wpb::SandboxStatus> {
        self.set_frozen(id, generation, false).await
    }

    /// Freezes or thaws the sandbox's cgroup through the runtime.
    async fn set_frozen(
        &self,
        id: &str,
        generation: i64,
        frozen: bool,
    ) -> anyhow::Result<wpb::SandboxStatus> {
        let lock = self.lock(id).await;
        let _g = lock.lock().await;
        let mut h = self.fenced(id, generation).await?;
        if frozen {
            self.runtime.pause(h.cid()).await?;
        } else {
            self.runtime.resume(h.cid()).await?;
        }
        h.state = if frozen { "paused" } else { "running" }.into();
        self.save(&h)?;
        Ok(Self::status(&h, ""))
    }

    /// Stops every process (the container goes), keeping the directories.
    pub async fn stop(&self, id: &str, generation: i64) -> anyhow::Result<wpb::SandboxStatus> {
        let lock = self.lock(id).await;
        let _g = lock.lock().await;
        let mut h = self.fenced(id, generation).await?;
        self.remove_container(h.cid()).await?;
        self.detach_network(&h).await;
        // Its root, its disk and its secrets: mounted again at start.
        rootfs::unmount_under(&self.layout(id).dir)?;

        h.state = "stopped".into();
        h.init = None;
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
        if let Some(e) = egress {
            h.egress = e;
        }
        let layout = self.layout(id);
        let spec: wpb::SandboxSpec =
            prost::Message::decode(std::fs::read(layout.dir.join("spec.bin"))?.as_slice())?;
        self.boot(&layout, id, h.uid(), &spec, h).await
    }

    /// Removes the container and every file of the sandbox. Deleting what
    /// is not here succeeds: it is already gone.
    pub async fn delete(&self, id: &str, generation: i64) -> anyhow::Result<wpb::SandboxStatus> {
        anyhow::ensure!(valid_id(id), "invalid sandbox id");
        let lock = self.lock(id).await;
        let _g = lock.lock().await;
        if let Some(h) = self.held(id) {
            anyhow::ensure!(
                generation >= h.generation,
                "stale generation {generation} < {}",
                h.generation
            );
        }
        self.deleted
            .lock()
            .expect("tombstones")
            .insert(id.to_string(), (generation, std::time::Instant::now()));
        self.teardown(id).await?;
        self.locks.lock().await.remove(id);
        Ok(wpb::SandboxStatus {
            sandbox_id: id.into(),
            generation,
            state: SandboxState::Deleted as i32,

            message: String::new(),
        })
    }

    /// Kills a container (thawed first: a frozen one cannot die) and
    /// removes it from the runtime.
    async fn remove_container(&self, cid: &str) -> anyhow::Result<()> {
        if self.runtime.status(cid).await? == Some(ContainerStatus::Paused) {
            let _ = self.runtime.resume(cid).await;
        }
        let _ = self.runtime.kill(cid, "KILL").await;
        self.runtime.delete(cid).await
    }

    async fn teardown(&self, id: &str) -> anyhow::Result<()> {
        let held = self.held(id);
        self.remove_container(held.as_ref().map_or(id, Held::cid))
            .await?;
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

/// A sandbox's root is an unprivileged host user: it must be able to
/// pass through every directory above its bundle.
fn traversable(dir: &Path) -> anyhow::Result<()> {
    let mut p = Some(dir);
    while let Some(d) = p {
        let mode = std::fs::metadata(d)?.permissions().mode();
        if mode & 0o001 == 0 {
            anyhow::bail!(
                "{} is not traversable by other users (mode {:o}); sandboxes under {} could not reach their root. \
                 Use a data directory outside it (for example /var/lib/talon)",
                d.display(),
                mode & 0o777,
                dir.display()
            );
        }
        p = d.parent();
    }
    Ok(())
}

/// Copies the agent binary once into the data directory, read-only, named
/// by its content; that copy, not the worker's executable, enters sandboxes.
fn seal_agent(data_dir: &Path, agent: &Path) -> anyhow::Result<PathBuf> {
    let bytes = std::fs::read(agent)
        .map_err(|e| anyhow::anyhow!("talon-agent at {}: {e}", agent.display()))?;
    let digest = {
        // FNV-1a is enough to name a file by content; integrity comes from
        // the copy being ours and read-only.
        let mut h: u64 = 0xcbf29ce484222325;
        for b in &bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x100000001b3);
        }
        h
    };
    if needs_interpreter(&bytes) {
        tracing::warn!(
            agent = %agent.display(),
            "talon-agent is dynamically linked: sandboxes of images without this host's libc won't start; build it with scripts/build-agent.sh"
        );
    }
    let dir = data_dir.join("agent");
    std::fs::create_dir_all(&dir)?;
    // Sandboxes run the copy (through a bind); nobody lists the directory.
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o711))?;
    let path = dir.join(format!("talon-agent-{digest:016x}"));
    if !path.exists() {
        let tmp = dir.join(format!(".tmp-{}", std::process::id()));
        std::fs::write(&tmp, &bytes)?;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o555))?;
        std::fs::rename(&tmp, &path)?;
    }
    Ok(path)
}

/// Whether a 64-bit little-endian ELF executable names a program
/// interpreter (PT_INTERP), i.e. is dynamically linked.
pub fn needs_interpreter(elf: &[u8]) -> bool {
    let u16_at = |o: usize| {
        elf.get(o..o + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]) as usize)
    };
    let u32_at = |o: usize| {
        elf.get(o..o + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let u64_at = |o: usize| {
        elf.get(o..o + 8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")) as usize)
    };
    if elf.get(..6) != Some(b"\x7fELF\x02\x01") {
        return false;
    }
    let (Some(phoff), Some(phentsize), Some(phnum)) = (u64_at(0x20), u16_at(0x36), u16_at(0x38))
    else {
        return false;
    };
    (0..phnum).any(|i| u32_at(phoff + i * phentsize) == Some(3))
}

/// Sets the UTS hostname of the sandbox whose init is `pid`, from a
/// thread that joins its UTS namespace (the agent has no CAP_SYS_ADMIN).
async fn set_hostname(pid: u32, name: &str) -> anyhow::Result<()> {
    let name = name.to_string();
    crate::ns::within(
        pid,
        "uts",
        crate::ns::Kind::HostNameAndNISDomainName,
        move || Ok(rustix::system::sethostname(name.as_bytes())?),
    )
    .await
}

/// Most bytes of secret files one sandbox may hold (its tmpfs's size).
pub const SECRETS_TMPFS_BYTES: u64 = 8 << 20;

/// Mounts the sandbox's secrets directory: a tmpfs of its own (secrets
/// never touch a disk), the sandbox's root's and no one else's, bound
/// read-only at /run/secrets. Once: a restarted worker finds it mounted.
fn mount_secrets(l: &Layout, uid: u32) -> anyhow::Result<()> {
    let at = l.secrets();
    if rootfs::mounts_under(&at).contains(&at) {
        return Ok(());
    }
    std::fs::create_dir_all(&at)?;
    let data = std::ffi::CString::new(format!(
        "size={SECRETS_TMPFS_BYTES},nr_inodes=1024,mode=0500,uid={uid},gid={uid}"
    ))?;
    use rustix::mount::MountFlags;
    rustix::mount::mount(
        "tmpfs",
        &at,
        "tmpfs",
        MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC,
        Some(data.as_c_str()),
    )
    .map_err(|e| anyhow::anyhow!("secrets tmpfs at {}: {e}", at.display()))
}

/// Writes a sandbox's secret files into its secrets tmpfs, readable by
/// its root only. Only the worker writes there (the sandbox sees it
/// read-only), and a name is one plain component.
fn write_secrets(l: &Layout, uid: u32, files: &HashMap<String, Vec<u8>>) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    for (name, value) in files {
        anyhow::ensure!(
            !name.is_empty() && !name.contains('/') && !name.starts_with('.'),
            "bad secret name"
        );
        let p = l.secrets().join(name);
        let _ = std::fs::remove_file(&p);
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o400)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&p)
            .map_err(|e| anyhow::anyhow!("secret file {name}: {e}"))?;
        f.write_all(value).map_err(|e| {
            anyhow::anyhow!(
                "secret file {name}: {e} (a sandbox's secret files hold at most {} MiB)",
                SECRETS_TMPFS_BYTES >> 20
            )
        })?;
        // On the fd: the secrets tmpfs is the sandbox's, and a path could
        // be swapped for a link to a host file between open and chown.
        std::os::unix::fs::fchown(&f, Some(uid), Some(uid))?;
    }
    Ok(())
}

/// Writes a file only root may read, atomically (a temporary file of mode
/// 0600, then a rename): records, specs and bundles, which may hold a
/// sandbox's environment and secrets.
fn write_private(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)?;
    f.write_all(bytes)?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}

/// A sandbox's directory: root's, traversable (its root user reaches its
/// bundle through it), not listable.
fn sandbox_dir(dir: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::DirBuilder::new().mode(0o711).create(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e.into()),
        _ => {}
    }
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o711))?;
    Ok(())
}

/// Creates the directories of a new sandbox on its mounted disk, owned by
/// its root user, and its bundle's root.
fn prepare(
    l: &Layout,
    uid: u32,
    image: Option<&HeldImage>,
    images: &ImageStore,
    nameserver: Option<std::net::Ipv4Addr>,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(l.rootfs())?;
    std::fs::set_permissions(l.bundle(), std::fs::Permissions::from_mode(0o711))?;
    let kind = image.map_or(RootKind::Host, HeldImage::root_kind);
    match image {
        None => prepare_host_root(l)?,
        Some(i) if i.mode == RootfsMode::Overlay => {
            std::fs::create_dir_all(l.upper())?;
            std::fs::create_dir_all(l.work())?;
            std::fs::set_permissions(l.work(), std::fs::Permissions::from_mode(0o700))?;
            // The upper directory's root is the sandbox's /, owned by its root.
            chown(l.upper(), Some(uid), Some(uid))?;
            std::fs::set_permissions(l.upper(), std::fs::Permissions::from_mode(0o755))?;
            let has = |p: &str| {
                i.layers
                    .iter()
                    .any(|d| images.layer_dir(d).join(p).symlink_metadata().is_ok())
            };
            let etc = l.upper().join("etc");
            std::fs::create_dir_all(&etc)?;
            chown(&etc, Some(uid), Some(uid))?;
            std::fs::set_permissions(&etc, std::fs::Permissions::from_mode(0o755))?;
            write_worker_etc(&etc, uid, nameserver)?;
            if !has("tmp") {
                let tmp = l.upper().join("tmp");
                std::fs::create_dir_all(&tmp)?;
                chown(&tmp, Some(uid), Some(uid))?;
                std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o1777))?;
            }
        }
        Some(_) => {
            std::fs::create_dir_all(l.etc())?;
            write_worker_etc(&l.etc(), uid, nameserver)?;
        }
    }
    for (dir, _) in l.private_dirs(kind) {
        std::fs::create_dir_all(&dir)?;
    }
    if kind == RootKind::Host {
        write_etc(l, nameserver)?;
        for e in bundle::HOST_ETC {
            let inside = l.etc().join(&e[5..]);
            let host = Path::new(e);
            if host.is_dir() {
                std::fs::create_dir_all(&inside)?;
            } else if host.exists() {
                std::fs::write(&inside, b"")?;
            }
        }
    }
    // The sandbox's root owns its private directories.
    for (dir, _) in l.private_dirs(kind) {
        chown_tree(&dir, uid)?;
    }
    std::fs::set_permissions(l.workspace(), std::fs::Permissions::from_mode(0o755))?;
    if kind != RootKind::Overlay {
        let disk = l.disk();
        std::fs::set_permissions(disk.join("tmp"), std::fs::Permissions::from_mode(0o1777))?;
        std::fs::set_permissions(disk.join("root"), std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// The `host` image's root: an empty tree with the mount points, the
/// host's merged-/usr symlinks mirrored.
fn prepare_host_root(l: &Layout) -> anyhow::Result<()> {
    for d in [
        "proc",
        "dev",
        "sys",
        "usr",
        "workspace",
        "tmp",
        "root",
        "var/log/talon",
        "etc",
        "run/secrets",
        ".talon",
    ] {
        std::fs::create_dir_all(l.rootfs().join(d))?;
    }
    std::fs::write(l.rootfs().join(".talon/agent"), b"")?;
    for d in bundle::HOST_DIRS {
        let host = Path::new(d);
        let inside = l.rootfs().join(&d[1..]);
        if host.is_symlink() {
            let target = std::fs::read_link(host)?;
            let _ = std::fs::remove_dir(&inside);
            std::os::unix::fs::symlink(target, &inside)?;
        } else if host.is_dir() {
            std::fs::create_dir_all(&inside)?;
        }
    }
    std::fs::create_dir_all(l.disk().join("var/log/talon"))?;
    std::fs::create_dir_all(l.disk().join("var/tmp"))?;
    Ok(())
}

/// /etc/hosts, /etc/hostname and /etc/resolv.conf, which the worker
/// provides whatever the image. With a network, the only name server is
/// the worker's resolver at the gateway.
fn write_worker_etc(
    dir: &Path,
    uid: u32,
    nameserver: Option<std::net::Ipv4Addr>,
) -> anyhow::Result<()> {
    let resolv = match nameserver {
        Some(ns) => format!("nameserver {ns}\noptions timeout:2 attempts:2\n"),
        None => std::fs::read_to_string("/etc/resolv.conf").unwrap_or_default(),
    };
    for (name, body) in [
        (
            "hosts",
            "127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n".to_string(),
        ),
        ("hostname", "sandbox\n".to_string()),
        ("resolv.conf", resolv),
    ] {
        let p = dir.join(name);
        if p.symlink_metadata().is_ok() {
            std::fs::remove_file(&p)?;
        }
        std::fs::write(&p, body)?;
        chown(&p, Some(uid), Some(uid))?;
    }
    Ok(())
}

fn write_etc(l: &Layout, nameserver: Option<std::net::Ipv4Addr>) -> anyhow::Result<()> {
    let etc = l.etc();
    std::fs::write(
        etc.join("passwd"),
        "root:x:0:0:root:/root:/bin/bash\nuser:x:1000:1000:user:/workspace:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
    )?;
    std::fs::write(
        etc.join("group"),
        "root:x:0:\ntty:x:5:\nuser:x:1000:\nnogroup:x:65534:\n",
    )?;
    std::fs::write(
        etc.join("nsswitch.conf"),
        "passwd: files\ngroup: files\nhosts: files dns\n",
    )?;
    write_worker_etc(&etc, 0, nameserver)?;
    Ok(())
}

fn chown_tree(p: &Path, uid: u32) -> std::io::Result<()> {
    chown(p, Some(uid), Some(uid))?;
    if p.is_dir() && !p.is_symlink() {
        for e in std::fs::read_dir(p)? {
            chown_tree(&e?.path(), uid)?;
        }
    }
    Ok(())
}

async fn wait_for_agent(socket: &Path, peer: AgentPeer) -> anyhow::Result<()> {
    let deadline = tokio::time::Instant::now() + AGENT_READY_TIMEOUT;
    loop {
        if let Ok(mut c) = crate::agent_client(socket, peer).await
            && c.ping(talon_proto::talon::agent::v1::PingRequest {})
                .await
                .is_ok()
        {
            return Ok(());
        }
        if tokio::time::Instant::now() > deadline {
            anyhow::bail!("the sandbox's agent did not answer within {AGENT_READY_TIMEOUT:?}");
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
