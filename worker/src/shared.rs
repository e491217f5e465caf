//! The `shared` workspace backend: sandbox disks (see `disk`) live under a
//! directory every worker of the platform mounts from shared storage (NFS,
//! CephFS, JuiceFS...), so a sandbox the control plane moves off a lost
//! worker starts on another with everything it wrote.
//!
//! One sandbox's directory holds its disk image, a `generation` file and a
//! `lock` file. Only POSIX semantics are assumed, and exclusive use is
//! guarded twice: a worker claims the disk for a generation only if the
//! recorded one is not newer (a late create of a moved sandbox is refused),
//! and holds an exclusive lock on `lock` while the disk is mounted, so a
//! worker that has not let go yet (a partition healing, a fence still
//! unmounting) makes the next one wait rather than mount the filesystem
//! twice. A delete removes the directory only at the recorded generation:
//! the old worker of a moved sandbox, told to let go, leaves the new
//! one's disk alone.

use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a claim waits for another worker's lock.
const LOCK_WAIT: Duration = Duration::from_secs(30);

#[derive(Debug)]
pub struct SharedDisks {
    root: PathBuf,
    /// The locks this worker holds, by sandbox.
    held: Mutex<HashMap<String, File>>,
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
        Ok(SharedDisks {
            root,
            held: Mutex::new(HashMap::new()),
        })
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
    /// generation is recorded; waits (bounded) for another worker's lock;
    /// then records the generation. Idempotent for a lock already held.
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
        if !self.held.lock().expect("locks").contains_key(id) {
            let lock = File::options()
                .create(true)
                .truncate(false)
                .write(true)
                .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW)
                .open(dir.join("lock"))?;
            let deadline = Instant::now() + LOCK_WAIT;
            loop {
                match rustix::fs::flock(&lock, rustix::fs::FlockOperation::NonBlockingLockExclusive)
                {
                    Ok(()) => break,
                    Err(e) if e == rustix::io::Errno::WOULDBLOCK && Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(100))
                    }
                    Err(e) => anyhow::bail!(
                        "the shared disk of sandbox {id} is still held by another worker ({e})"
                    ),
                }
            }
            self.held
                .lock()
                .expect("locks")
                .insert(id.to_string(), lock);
        }
        // Checked again under the lock: the holder may have moved it on.
        if let Some(g) = self.generation(id)?
            && g > generation
        {
            self.release(id);
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

    /// Lets go of the disk's lock (after it is unmounted).
    pub fn release(&self, id: &str) {
        self.held.lock().expect("locks").remove(id);
    }

    /// Removes the sandbox's disk if `generation` is the one recorded (or
    /// none is): a delete of an older generation leaves a moved sandbox's
    /// disk to the worker that holds it now. Releases the lock either way.
    pub fn remove(&self, id: &str, generation: i64) -> io::Result<bool> {
        let mine = match self.generation(id) {
            Ok(g) => g.is_none_or(|g| g <= generation),
            Err(e) => {
                self.release(id);
                return Err(e);
            }
        };
        let dir = self.dir(id);
        if mine && dir.exists() {
            std::fs::remove_dir_all(&dir)?;
        }
        self.release(id);
        Ok(mine)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generations_guard_the_disk() {
        let d = tempfile::tempdir().unwrap();
        let a = SharedDisks::new(d.path().join("s")).unwrap();
        let b = SharedDisks::new(d.path().join("s")).unwrap();
        assert_eq!(a.claim("sbx_1", 1).unwrap(), Claimed::New);
        std::fs::write(a.image("sbx_1"), b"disk").unwrap();
        // Another worker waits for the lock; once it is let go it claims
        // the disk for a newer generation and finds it.
        a.release("sbx_1");
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
    fn a_held_lock_makes_the_next_claim_fail_rather_than_share() {
        let d = tempfile::tempdir().unwrap();
        let a = SharedDisks::new(d.path().join("s")).unwrap();
        assert_eq!(a.claim("sbx_1", 1).unwrap(), Claimed::New);
        // flock locks belong to the open file: a second open of the same
        // file (another worker) is refused while the first holds it.
        let other = File::options()
            .write(true)
            .open(d.path().join("s/sbx_1/lock"))
            .unwrap();
        assert!(
            rustix::fs::flock(&other, rustix::fs::FlockOperation::NonBlockingLockExclusive)
                .is_err()
        );
        a.release("sbx_1");
        assert!(
            rustix::fs::flock(&other, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_ok()
        );
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
