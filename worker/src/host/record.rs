//! A sandbox's record: what this worker last left it as, in its state
//! file, which a restarted worker re-adopts from.

use super::*;
use crate::bundle::{self, RootKind};
use crate::image::archive::ImageConfig;
use crate::net::Egress;
use crate::pool::Shape;
use crate::rootfs::RootfsMode;
use serde::{Deserialize, Serialize};
use talon_proto::talon::worker::v1 as wpb;

/// Where a sandbox is, as this worker last left it. Stored as its
/// lowercase name (the state files' form since the first release); a
/// name this worker doesn't know makes the record unreadable, never
/// another phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxPhase {
    /// Being built for a create.
    Starting,
    Running,
    Paused,
    Stopped,
    Failed,
    /// Built ahead of demand, waiting in the prewarm pool.
    Pooled,
    /// Being handed from the pool to a create.
    Claiming,
}

impl SandboxPhase {
    /// Whether its container should be alive.
    pub fn is_live(self) -> bool {
        matches!(
            self,
            SandboxPhase::Running | SandboxPhase::Paused | SandboxPhase::Pooled
        )
    }

    /// What the control plane is told.
    pub fn reported(self) -> SandboxState {
        match self {
            SandboxPhase::Starting | SandboxPhase::Claiming => SandboxState::Starting,
            SandboxPhase::Running => SandboxState::Running,
            SandboxPhase::Paused => SandboxState::Paused,
            SandboxPhase::Stopped => SandboxState::Stopped,
            SandboxPhase::Failed => SandboxState::Failed,
            // Nobody's sandbox yet: never reported (see held_records).
            SandboxPhase::Pooled => SandboxState::Starting,
        }
    }
}

/// The state file's format: what this worker writes, and the newest it
/// reads. Every earlier one reads (a file without `format` is 1; their
/// fixtures are under `fixtures/`); a newer one is refused, never guessed
/// at (its sandbox's commands are refused until a worker that reads it
/// runs).
pub const STATE_FORMAT: u32 = 2;

fn first_format() -> u32 {
    1
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Held {
    /// The format it was written in (see `STATE_FORMAT`).
    #[serde(default = "first_format")]
    pub format: u32,
    pub sandbox_id: String,
    pub generation: i64,
    pub slot: u32,
    /// Where it is, as this worker last left it.
    pub state: SandboxPhase,
    /// The imported image it was built from; None for `host`. Kept here
    /// so it restarts, and its layers stay, after the image is deleted.
    #[serde(default)]
    pub image: Option<HeldImage>,
    /// Its egress policy; what it was created with until changed (`open`
    /// in a state file older than networking).
    #[serde(default)]
    pub egress: Egress,
    /// The runtime that runs it (`container` in a state file older than
    /// isolation levels).
    #[serde(default)]
    pub isolation: crate::runtime::Isolation,
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
    /// When the first of its secrets expires (ms since the epoch), so
    /// the sweep (`expire_secrets`) reads its spec only then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secrets_expire_at: Option<i64>,
    /// Set when its environment changed (a secret rotated or gone) while
    /// its agent could not be told (frozen): the names to unset, told at
    /// the thaw along with the spec's environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env_unset: Option<Vec<String>>,
    /// The revision of the last secrets update applied (see
    /// `UpdateSecretsCommand`); an older one is ignored.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub secrets_revision: i64,
    /// Frozen after this long without activity (ms); see `idle`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_timeout_ms: Option<u64>,
    /// It moves to another worker should this one be lost even with an
    /// empty workspace (its spec's `move_on_worker_loss`): fenced from
    /// FENCE_SCOPE_MOVABLE on (see `fenced_at`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub move_on_loss: bool,
    /// Its container was gone when the worker started (its host
    /// restarted): reported with its state until it starts again, so the
    /// control plane applies its restart policy.
    #[serde(default, skip_serializing_if = "is_false")]
    pub container_gone: bool,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
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

    /// The recorded init pid, if that process is still the one recorded
    /// and alive: a killed init waiting to be reaped (a zombie) is gone.
    pub(super) fn live_init(&self) -> Option<u32> {
        let (pid, start) = self.init?;
        (process_start(pid) == Some((start, true))).then_some(pid)
    }
}

/// A process's start time (field 22 of /proc/PID/stat) and whether it is
/// alive (its state, field 3, is not zombie or dead).
fn process_start(pid: u32) -> Option<(u64, bool)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces; fields after it don't.
    let mut rest = stat.rsplit_once(')')?.1.split_whitespace();
    let state = rest.next()?;
    let start = rest.nth(18)?.parse().ok()?;
    Some((start, !matches!(state, "Z" | "X" | "x")))
}

/// A process's start time (field 22 of /proc/PID/stat).
pub(super) fn start_time(pid: u32) -> Option<u64> {
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
    pub(super) fn root_kind(&self) -> RootKind {
        match self.mode {
            RootfsMode::Overlay => RootKind::Overlay,
            RootfsMode::Hardlink => RootKind::ReadOnlyImage,
        }
    }
}

impl SandboxHost {
    pub(super) fn all_held(&self) -> Vec<Held> {
        self.held_dirs().into_iter().map(|(_, h)| h).collect()
    }

    /// Every sandbox directory with the record in it: (directory name,
    /// record). The name is the sandbox id but mid-claim.
    pub(super) fn held_dirs(&self) -> Vec<(String, Held)> {
        let records = self.records.lock().expect("records");
        let mut out: Vec<(String, Held)> = records
            .iter()
            .filter_map(|(dir, r)| r.as_ref().ok().map(|h| (dir.clone(), h.clone())))
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// Whether a sandbox's image is still here with the layers it was
    /// built from (an image imported again under its name has others).
    pub(super) fn image_current(&self, h: &Held) -> bool {
        h.image.as_ref().is_none_or(|i| {
            self.images
                .get(&i.name)
                .is_some_and(|r| r.layers == i.layers)
        })
    }

    /// The record of sandbox `id`, if it is here and reads.
    pub fn held(&self, id: &str) -> Option<Held> {
        self.record(id).ok()
    }

    /// The record of sandbox `id`: NotHere, or Corrupt when its state
    /// file doesn't read (never a guess at its state).
    pub(super) fn record(&self, id: &str) -> Result<Held, WorkerError> {
        if !valid_id(id) {
            return Err(WorkerError::InvalidId(id.to_string()));
        }
        match self.records.lock().expect("records").get(id) {
            None => Err(WorkerError::NotHere(id.to_string())),
            Some(Ok(h)) => Ok(h.clone()),
            Some(Err(reason)) => Err(WorkerError::Corrupt {
                id: id.to_string(),
                reason: reason.clone(),
            }),
        }
    }

    /// Forgets the record of a directory that is gone (removed, or renamed
    /// by a claim).
    pub(super) fn forget_record(&self, dir: &str) {
        self.records.lock().expect("records").remove(dir);
        self.activity.lock().expect("activity").remove(dir);
    }

    /// The directory names of every record, those that don't read too.
    pub(super) fn record_dirs(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .records
            .lock()
            .expect("records")
            .keys()
            .cloned()
            .collect();
        v.sort();
        v
    }

    pub(super) fn save(&self, h: &Held) -> anyhow::Result<()> {
        let dir = self.layout(&h.sandbox_id).dir;
        let mut h = h.clone();
        h.format = STATE_FORMAT;
        write_private(&dir.join("state.json"), &serde_json::to_vec(&h)?)?;
        self.records
            .lock()
            .expect("records")
            .insert(h.sandbox_id.clone(), Ok(h));
        Ok(())
    }

    /// Every sandbox held here (pooled ones aside), as the records say,
    /// without asking the runtime: what the periodic reconcile sends.
    /// Sandboxes (pooled ones aside) being built, running or paused:
    /// what the control plane counts as live on this worker.
    pub fn live_count(&self) -> usize {
        self.records
            .lock()
            .expect("records")
            .values()
            .flatten()
            .filter(|h| {
                h.pooled.is_none()
                    && matches!(
                        h.state,
                        SandboxPhase::Starting
                            | SandboxPhase::Claiming
                            | SandboxPhase::Running
                            | SandboxPhase::Paused
                    )
            })
            .count()
    }

    /// Whether the fence stops `h` at `scope`: only what another worker
    /// could start (the server's `fencing::fenced_at`, from this side).
    pub fn fenced_at(&self, h: &Held, scope: wpb::FenceScope) -> bool {
        use crate::lease::rank;
        h.pooled.is_none()
            && ((self.shared.is_some() && rank(scope) >= rank(wpb::FenceScope::Shared))
                || (h.move_on_loss && rank(scope) >= rank(wpb::FenceScope::Movable)))
    }

    /// The sandboxes the fence stops at `scope`, with their containers'
    /// names (a claimed pooled one keeps its own): what the fence keeper
    /// kills when the lease lapses.
    pub fn fence_targets(&self, scope: wpb::FenceScope) -> Vec<crate::keeper::Target> {
        self.all_held()
            .into_iter()
            .filter(|h| self.fenced_at(h, scope))
            .map(|h| crate::keeper::Target {
                container: h.cid().to_string(),
                sandbox: h.sandbox_id,
            })
            .collect()
    }

    pub fn held_records(&self) -> Vec<wpb::SandboxStatus> {
        self.all_held()
            .into_iter()
            .filter(|h| h.pooled.is_none())
            .map(|h| Self::status(&h, ""))
            .collect()
    }

    pub(super) fn status(h: &Held, message: &str) -> wpb::SandboxStatus {
        wpb::SandboxStatus {
            sandbox_id: h.sandbox_id.clone(),
            generation: h.generation,
            state: h.state.reported() as i32,
            message: message.to_string(),
            fenced: false,
            container_gone: h.container_gone,
        }
    }
}

/// The records of every sandbox directory under `root`, as their state
/// files say. One that doesn't read is kept as the reason (and logged):
/// its sandbox is refused every command, not taken for another state.
pub(super) fn load_records(root: &Path) -> HashMap<String, Result<Held, String>> {
    let mut out = HashMap::new();
    for e in std::fs::read_dir(root).into_iter().flatten().flatten() {
        let dir = e.file_name().to_string_lossy().into_owned();
        if !valid_id(&dir) {
            continue;
        }
        let file = e.path().join("state.json");
        let text = match std::fs::read_to_string(&file) {
            Ok(t) => t,
            // A directory being made, or one whose record is gone.
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => continue,
            Err(err) => {
                out.insert(dir, Err(err.to_string()));
                continue;
            }
        };
        let r = serde_json::from_str::<Held>(&text)
            .map_err(|e| e.to_string())
            .and_then(|h| {
                if h.format > STATE_FORMAT {
                    Err(format!(
                        "written by a newer worker (state format {}; this one reads up to {STATE_FORMAT})",
                        h.format
                    ))
                } else {
                    Ok(h)
                }
            });
        if let Err(reason) = &r {
            tracing::error!(sandbox = %dir, %reason, "a sandbox's record does not read; its commands are refused");
        }
        out.insert(dir, r);
    }
    out
}
