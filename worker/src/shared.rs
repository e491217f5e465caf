//! The `shared` workspace backend: sandbox disks (see `disk`) live under a
//! directory every worker of the platform mounts from shared storage (NFS,
//! CephFS, JuiceFS...), so a sandbox the control plane moves off a lost
//! worker starts on another with everything it wrote.
//!
//! One sandbox's directory holds its disk image and a `generation` file.
//! Only POSIX semantics are assumed (no file locks: those of a dead NFS
//! client outlive it by the server's lease, which would hold every move
//! up). Exclusive use is guarded by the generation and by fencing: a
//! worker claims the disk for a generation only if the recorded one is not
//! newer (a late create of a moved sandbox is refused), and the control
//! plane moves a sandbox only after its old worker's lease and a grace
//! period have passed, by when that worker (or, if it is stopped, its fence
//! keeper) has killed the sandbox and unmounted its disk. A delete removes
//! the directory only at the recorded generation: the old worker of a
//! moved sandbox, told to let go, leaves the new one's disk alone.

use std::io;
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub struct SharedDisks {
    root: PathBuf,
}

/// What a claim found.
#[derive(Debug, PartialEq, Eq)]
pub enum Claimed {
    /// No disk yet: make one.
    New,
    /// A disk of an earlier generation (or this one, after a restart).
    Existing,
}

impl SharedDisks {
    pub fn new(root: PathBuf) -> io::Result<Self> {
        std::fs::create_dir_all(&root)?;
        std::fs::set_permissions(&root, std::os::unix::fs::PermissionsExt::from_mode(0o700))?;
        Ok(SharedDisks { root })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn dir(&self, id: &str) -> PathBuf {
        self.root.join(id)
    }

    /// The sandbox's disk image on shared storage.
    pub fn image(&self, id: &str) -> PathBuf {
        self.dir(id).join("disk.img")
    }

    /// The generation recorded for the sandbox's disk (None: none yet).
    pub fn generation(&self, id: &str) -> io::Result<Option<i64>> {
        match std::fs::read_to_string(self.dir(id).join("generation")) {
            Ok(s) => s.trim().parse().map(Some).map_err(|_| {
                io::Error::other(format!(
                    "the generation file of sandbox {id} does not read ({s:?}); refusing to guess"
                ))
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Claims the sandbox's disk for `generation`: refused when a newer
    /// generation is recorded; then records this one.
    pub fn claim(&self, id: &str, generation: i64) -> anyhow::Result<Claimed> {
        let dir = self.dir(id);
        std::fs::create_dir_all(&dir)?;
        if let Some(g) = self.generation(id)?
            && g > generation
        {
            anyhow::bail!(
                "the shared disk of sandbox {id} belongs to generation {g}, newer than {generation}"
            );
        }
        let tmp = dir.join("generation.tmp");
        std::fs::write(&tmp, generation.to_string())?;
        std::fs::rename(&tmp, dir.join("generation"))?;
        Ok(if self.image(id).exists() {
            Claimed::Existing
        } else {
            Claimed::New
        })
    }

    /// Removes the sandbox's disk if `generation` is the one recorded (or
    /// none is): a delete of an older generation leaves a moved sandbox's
    /// disk to the worker that holds it now.
    pub fn remove(&self, id: &str, generation: i64) -> io::Result<bool> {
        let mine = self.generation(id)?.is_none_or(|g| g <= generation);
        let dir = self.dir(id);
        if mine && dir.exists() {
            std::fs::remove_dir_all(&dir)?;
        }
        Ok(mine)
    }
}

/// Named volumes (the server's VolumeService) live beside the sandboxes'
/// disks: `volumes/ID/disk.img`, with a `holder` file naming the sandbox
/// and generation that last mounted it. The control plane gives a volume
/// to one sandbox at a time; the holder file refuses only a late mount by
/// an older generation of the same sandbox (a worker that missed a move).
impl SharedDisks {
    fn volume_dir(&self, volume_id: &str) -> anyhow::Result<PathBuf> {
        anyhow::ensure!(
            talon_core::ids::valid_id("vol", volume_id),
            "invalid volume id {volume_id:?}"
        );
        Ok(self.root.join("volumes").join(volume_id))
    }

    /// Claims volume `volume_id` for sandbox `id` at `generation`, and
    /// returns its image (made by the caller when missing).
    pub fn claim_volume(
        &self,
        volume_id: &str,
        id: &str,
        generation: i64,
    ) -> anyhow::Result<PathBuf> {
        let dir = self.volume_dir(volume_id)?;
        std::fs::create_dir_all(&dir)?;
        let holder = dir.join("holder");
        match std::fs::read_to_string(&holder) {
            Ok(s) => {
                let mut parts = s.split_whitespace();
                let (who, g) = (parts.next(), parts.next().map(str::parse::<i64>));
                match (who, g) {
                    (Some(who), Some(Ok(g))) => anyhow::ensure!(
                        who != id || g <= generation,
                        "volume {volume_id} is held by generation {g} of sandbox {id}, newer than {generation}"
                    ),
                    _ => anyhow::bail!(
                        "the holder file of volume {volume_id} does not read ({s:?}); refusing to guess"
                    ),
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e.into()),
        }
        let tmp = dir.join("holder.tmp");
        std::fs::write(&tmp, format!("{id} {generation}"))?;
        std::fs::rename(&tmp, &holder)?;
        Ok(dir.join("disk.img"))
    }

    /// Removes a volume's files; what is not there is removed already.
    pub fn remove_volume(&self, volume_id: &str) -> anyhow::Result<()> {
        let dir = self.volume_dir(volume_id)?;
        match std::fs::remove_dir_all(&dir) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e.into()),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_volume_refuses_an_older_generation_of_its_sandbox() {
        let d = tempfile::tempdir().unwrap();
        let s = SharedDisks::new(d.path().join("s")).unwrap();
        let img = s.claim_volume("vol_a", "sbx_1", 2).unwrap();
        assert!(img.ends_with("volumes/vol_a/disk.img"));
        assert!(s.claim_volume("vol_a", "sbx_1", 1).is_err());
        assert!(s.claim_volume("vol_a", "sbx_1", 3).is_ok());
        // Another sandbox: the control plane gave it the volume.
        assert!(s.claim_volume("vol_a", "sbx_2", 1).is_ok());
        assert!(s.claim_volume("../x", "sbx_2", 1).is_err());
        std::fs::write(d.path().join("s/volumes/vol_a/holder"), "junk").unwrap();
        assert!(s.claim_volume("vol_a", "sbx_2", 1).is_err());
        s.remove_volume("vol_a").unwrap();
        assert!(!d.path().join("s/volumes/vol_a").exists());
        s.remove_volume("vol_a").unwrap();
    }

    use super::*;

    #[test]
    fn generations_guard_the_disk() {
        let d = tempfile::tempdir().unwrap();
        let a = SharedDisks::new(d.path().join("s")).unwrap();
        let b = SharedDisks::new(d.path().join("s")).unwrap();
        assert_eq!(a.claim("sbx_1", 1).unwrap(), Claimed::New);
        std::fs::write(a.image("sbx_1"), b"disk").unwrap();
        // Another worker claims it for a newer generation and finds it.
        assert_eq!(b.claim("sbx_1", 2).unwrap(), Claimed::Existing);
        // The old generation can neither claim nor remove it.
        assert!(
            a.claim("sbx_1", 1)
                .unwrap_err()
                .to_string()
                .contains("generation 2")
        );
        assert!(!a.remove("sbx_1", 1).unwrap());
        assert!(b.image("sbx_1").exists());
        // Its own generation removes it.
        assert!(b.remove("sbx_1", 2).unwrap());
        assert!(!b.image("sbx_1").exists());
    }

    #[test]
    fn an_unreadable_generation_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let a = SharedDisks::new(d.path().join("s")).unwrap();
        std::fs::create_dir_all(d.path().join("s/sbx_1")).unwrap();
        std::fs::write(d.path().join("s/sbx_1/generation"), "x").unwrap();
        assert!(a.claim("sbx_1", 5).is_err());
        assert!(a.remove("sbx_1", 5).is_err());
    }
}
