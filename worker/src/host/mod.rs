//! The sandboxes of this worker: their directories, their state on disk,
//! and the runtime calls that build, freeze, stop and remove them. The
//! state file of each sandbox is what a restarted worker re-adopts from.

mod agent_bin;
mod fence;
mod idle;
mod lifecycle;
mod pooling;
mod prepare;
mod reap;
mod record;
mod recover;
mod secrets;
mod snapshot;

pub use agent_bin::needs_interpreter;
pub use fence::{Fence, WorkerError, code_of, fence};
pub use prepare::SECRETS_TMPFS_BYTES;
pub use record::{Held, HeldImage, SandboxPhase};
pub use recover::Settled;
pub use snapshot::SnapshotProgress;

use crate::agent_socket::AgentPeer;
use crate::bundle::Layout;
use crate::image::ImageStore;
use crate::net::{Egress, NetOptions, Network};
use crate::pool::{Pool, PoolOptions};
use crate::rootfs::RootfsMode;
use crate::runtime::{Isolation, Runtime};
use agent_bin::*;
use idle::idle_limit;
use prepare::*;
use record::*;
use secrets::*;
use std::collections::HashMap;
use std::collections::HashSet;
use std::os::unix::fs::PermissionsExt;
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
    /// The agent's own limits in each sandbox.
    pub agent: crate::bundle::AgentOptions,
    /// The `shared` workspace backend's directory (see `shared`); None:
    /// sandbox disks live on this worker's own disk (`local`).
    pub shared_disks: Option<PathBuf>,
    /// The cgroup (in every hierarchy) this worker's sandboxes are under:
    /// one per worker when several share a machine.
    pub cgroup_parent: String,
}

/// Whether a cgroup parent is one name a worker may use.
pub fn valid_cgroup_parent(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
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
            agent: Default::default(),
            shared_disks: None,
            cgroup_parent: "talon".into(),
        }
    }
}

pub struct SandboxHost {
    root: PathBuf,
    /// The runtime of the `container` level.
    runtime: Arc<dyn Runtime>,
    /// The runtime of the `gvisor` level, where this worker offers it.
    gvisor: Option<Arc<dyn Runtime>>,
    agent: PathBuf,
    agent_options: crate::bundle::AgentOptions,
    /// Where sandbox disks live when they are shared between workers.
    shared: Option<Arc<crate::shared::SharedDisks>>,
    /// Snapshots on that shared storage (see `image::shared`).
    shared_images: Option<Arc<crate::image::shared::SharedImages>>,
    cgroup_parent: String,
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
    /// Every sandbox directory's record, by directory name (the sandbox
    /// id, but mid-claim): read from the state files at start, kept with
    /// them since, so no call reads a file (the data plane asks on every
    /// forwarded call). A record that doesn't read is kept as its reason.
    records: std::sync::Mutex<HashMap<String, Result<Held, String>>>,
    /// When each sandbox was last touched (see `idle`); in memory only.
    activity: std::sync::Mutex<HashMap<String, idle::Seen>>,
}

/// How long a delete is remembered against a late create.
const TOMBSTONE_TTL: Duration = Duration::from_secs(600);

use talon_core::ids::valid_sandbox_id as valid_id;

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
        crate::disk::set_release_wait(opts.disk.release_wait);
        let disks = crate::disk::Templates::new(data_dir.join("disk-templates"), opts.disk)?;
        let shared = match &opts.shared_disks {
            Some(dir) => Some(Arc::new(crate::shared::SharedDisks::new(dir.clone())?)),
            None => None,
        };
        let shared_images = match &opts.shared_disks {
            Some(dir) => Some(Arc::new(crate::image::shared::SharedImages::new(dir)?)),
            None => None,
        };
        let mut pool = opts.pool;
        if shared.is_some() && pool.size > 0 {
            // A pooled sandbox's disk is made before its id is known, on
            // this worker's disk: not yet built for shared storage.
            tracing::warn!("the prewarm pool is off with shared workspaces");
            pool.size = 0;
        }
        anyhow::ensure!(
            valid_cgroup_parent(&opts.cgroup_parent),
            "invalid cgroup parent {:?}: 1-64 letters, digits, - or _",
            opts.cgroup_parent
        );
        Ok(SandboxHost {
            shared,
            shared_images,
            cgroup_parent: opts.cgroup_parent.clone(),
            runtime,
            gvisor: None,
            agent: sealed,
            images: Arc::new(images),
            rootfs_mode: opts.rootfs_mode,
            agent_options: opts.agent,
            locks: Mutex::new(HashMap::new()),
            net: std::sync::OnceLock::new(),
            slots: Mutex::new(()),
            pool: Arc::new(Pool::new(pool)),
            disks,
            deleted: std::sync::Mutex::new(HashMap::new()),
            records: std::sync::Mutex::new(load_records(&root)),
            activity: Default::default(),
            root,
        })
    }

    /// The cgroup this worker's sandboxes are under.
    pub fn cgroup_parent(&self) -> &str {
        &self.cgroup_parent
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
            if !h.state.is_live() {
                continue;
            }
            let lock = self.lock(&h.sandbox_id).await;
            let _g = lock.lock().await;
            if let Ok(Some(pid)) = self.pid_of(&h).await {
                if let Err(e) = net
                    .adopt(h.cid(), h.slot, &self.netns(&h, pid), &h.egress)
                    .await
                {
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
        let live = matches!(h.state, SandboxPhase::Running | SandboxPhase::Paused);
        match self.net.get() {
            Some(net) if live => {
                let pid = self
                    .pid_of(&h)
                    .await?
                    .ok_or_else(|| anyhow::anyhow!("the sandbox's container is gone"))?;
                // runsc's netstack took the sandbox's links at its start:
                // a link can come or go only with a restart.
                anyhow::ensure!(
                    h.isolation == Isolation::Container
                        || matches!(h.egress, Egress::Deny) == matches!(policy, Egress::Deny),
                    WorkerError::Invalid(
                        "a gvisor sandbox's network is turned on or off (deny) only when it starts: stop the sandbox, update its policy, then start it".into()
                    )
                );
                net.update(h.cid(), h.slot, &self.netns(&h, pid), &h.egress, &policy)
                    .await?;
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
        let mut existed = self.images.delete(name, &self.layers_in_use())?;
        if let Some(s) = &self.shared_images {
            existed |= s.delete(name)?;
        }
        Ok(existed)
    }

    pub fn runtime_name(&self) -> &str {
        self.runtime.name()
    }

    /// Offers the `gvisor` level through `runsc` (see `runtime::OciCli::gvisor`).
    pub fn with_gvisor(mut self, runsc: Arc<dyn Runtime>) -> Self {
        self.gvisor = Some(runsc);
        self
    }

    /// The isolation levels this worker runs sandboxes at.
    pub fn isolation_levels(&self) -> Vec<Isolation> {
        let mut v = vec![Isolation::Container];
        if self.gvisor.is_some() {
            v.push(Isolation::Gvisor);
        }
        v
    }

    /// The runtime of a level, or why this worker cannot run it.
    pub(super) fn runtime_for(&self, level: Isolation) -> anyhow::Result<&Arc<dyn Runtime>> {
        match level {
            Isolation::Container => Ok(&self.runtime),
            Isolation::Gvisor => self.gvisor.as_ref().ok_or_else(|| {
                WorkerError::Invalid("this worker does not offer gvisor isolation".into()).into()
            }),
        }
    }

    pub(super) fn layout(&self, id: &str) -> Layout {
        Layout {
            dir: self.root.join(id),
            shared_image: self.shared.as_ref().map(|s| s.image(id)),
        }
    }

    /// Where a held sandbox's agent answers, and who must answer there:
    /// its init (under gVisor, its gofer), as its root (`agent_socket`
    /// checks both on connecting).
    pub async fn agent_endpoint(&self, h: &Held) -> anyhow::Result<(PathBuf, AgentPeer)> {
        anyhow::ensure!(valid_id(&h.sandbox_id), "invalid sandbox id");
        let pid = self
            .pid_of(h)
            .await?
            .ok_or_else(|| anyhow::anyhow!("the sandbox's container is gone"))?;
        let layout = self.layout(&h.sandbox_id);
        let socket = match h.isolation {
            Isolation::Container => layout.agent_socket(),
            Isolation::Gvisor => layout.agent_uds(),
        };
        let pid = self
            .runtime_for(h.isolation)?
            .agent_server(h.cid(), pid)
            .await?;
        Ok((socket, AgentPeer { pid, uid: h.uid() }))
    }

    /// A client of the agent of the sandbox `id`.
    pub async fn agent(&self, id: &str) -> anyhow::Result<crate::AgentClient> {
        let h = self
            .held(id)
            .ok_or_else(|| anyhow::anyhow!("sandbox {id} is not on this worker"))?;
        let (socket, peer) = self.agent_endpoint(&h).await?;
        crate::agent_client(&socket, peer).await
    }

    pub(super) async fn lock(&self, id: &str) -> Arc<Mutex<()>> {
        self.locks
            .lock()
            .await
            .entry(id.to_string())
            .or_default()
            .clone()
    }

    /// The host pid of a held sandbox's init: the recorded one while it
    /// lives (no runtime call), else the runtime's.
    /// None when its container is gone.
    /// What usage is read from for a held sandbox: its init's pid (its
    /// cgroup is that process's) and where its disk is mounted; None when
    /// its container is not there.
    pub async fn usage_target(&self, h: &Held) -> anyhow::Result<Option<(u32, PathBuf)>> {
        let Some(pid) = self.pid_of(h).await? else {
            return Ok(None);
        };
        let layout = self.layout(&h.sandbox_id);
        disk_mounted(&layout, &h.sandbox_id)?;
        Ok(Some((pid, layout.disk())))
    }

    /// The network namespace of a held sandbox whose init is `pid`: the
    /// init's, or under gVisor the one the worker made for it at its
    /// start (`Layout::netns`).
    pub(super) fn netns(&self, h: &Held, pid: u32) -> crate::net::NetNs {
        match h.isolation {
            Isolation::Container => crate::net::NetNs::Pid(pid),
            Isolation::Gvisor => crate::net::NetNs::File(self.layout(&h.sandbox_id).netns()),
        }
    }

    pub(super) async fn pid_of(&self, h: &Held) -> anyhow::Result<Option<u32>> {
        if let Some(pid) = h.live_init() {
            return Ok(Some(pid));
        }
        Ok(self
            .runtime_for(h.isolation)?
            .state(h.cid())
            .await?
            .map(|(_, pid)| pid)
            .filter(|pid| *pid > 0))
    }

    pub(super) async fn detach_network(&self, h: &Held) {
        if let Some(net) = self.net.get()
            && let Err(e) = net.detach(h.cid(), h.slot).await
        {
            tracing::warn!(sandbox = %h.sandbox_id, error = %e, "could not remove the sandbox's network");
        }
    }

    pub(super) fn free_slot(&self) -> u32 {
        let used: HashSet<u32> = self.all_held().into_iter().map(|h| h.slot).collect();
        (0..).find(|s| !used.contains(s)).expect("a free slot")
    }
}

/// Refuses to read a sandbox's disk where it is not mounted: a disk
/// mount removed under a live sandbox leaves the host's own filesystem
/// there, which snapshots and usage must never take for the sandbox's.
pub(super) fn disk_mounted(l: &Layout, id: &str) -> Result<(), WorkerError> {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(l.disk()), std::fs::metadata(&l.dir)) {
        (Ok(disk), Ok(dir)) if disk.dev() != dir.dev() => Ok(()),
        _ => Err(WorkerError::DiskNotMounted(id.to_string())),
    }
}

#[cfg(test)]
mod tests;
