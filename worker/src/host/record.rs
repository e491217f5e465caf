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
    pub(super) fn live_init(&self) -> Option<u32> {
        let (pid, start) = self.init?;
        (start_time(pid) == Some(start)).then_some(pid)
    }
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
    pub(super) fn image_current(&self, h: &Held) -> bool {
        h.image.as_ref().is_none_or(|i| {
            self.images
                .get(&i.name)
                .is_some_and(|r| r.layers == i.layers)
        })
    }

    pub fn held(&self, id: &str) -> Option<Held> {
        if !valid_id(id) {
            return None;
        }
        let s = std::fs::read_to_string(self.layout(id).dir.join("state.json")).ok()?;
        serde_json::from_str(&s).ok()
    }

    pub(super) fn save(&self, h: &Held) -> anyhow::Result<()> {
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

    pub(super) fn status(h: &Held, message: &str) -> wpb::SandboxStatus {
        wpb::SandboxStatus {
            sandbox_id: h.sandbox_id.clone(),
            generation: h.generation,
            state: state_pb(&h.state) as i32,
            message: message.to_string(),
        }
    }
}
