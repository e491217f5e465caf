//! The agent binary: sealed once per worker, checked to be static, and
//! waited for when a sandbox starts.

use super::*;
use crate::agent_socket::AgentPeer;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Copies the agent binary once into the data directory, read-only, named
/// by its content; that copy, not the worker's executable, enters sandboxes.
pub(super) fn seal_agent(data_dir: &Path, agent: &Path) -> anyhow::Result<PathBuf> {
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

pub(super) async fn wait_for_agent(socket: &Path, peer: AgentPeer) -> anyhow::Result<()> {
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
