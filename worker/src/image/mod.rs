//! The worker's image store: imported images and their layers, content
//! addressed by diff id, so a layer shared by two images is unpacked once.
//!
//! ```text
//! DATA/images/            0700: sandboxes never reach it by path
//!   layers/<diff id>/     one unpacked layer, overlay whiteouts, real owners
//!   refs/<hash of name>   the image: name, digest, layers, config (JSON)
//!   flat/<digest>/        the layers merged with hardlinks (rootfs mode `hardlink`)
//!   tmp/                  uploads and layers being unpacked
//! ```
//!
//! Sandboxes get the layers through idmapped mounts (see `rootfs`), so the
//! store keeps the image's own owners and is shared by sandboxes with
//! different host uid ranges.

pub mod archive;
pub mod capture;
pub mod pack;
pub mod shared;
pub mod unpack;

use crate::beneath::{self, RelPath, Tree, name};
use archive::{Archive, Hashing, ImageConfig, digest_hex, sha256_hex};
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::os::fd::OwnedFd;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// An image this worker holds.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ImageRef {
    pub name: String,
    pub digest: String,
    /// Diff ids (hex), bottom layer first.
    pub layers: Vec<String>,
    pub config: ImageConfig,
    pub size_bytes: u64,
    pub created_ms: i64,
    /// A snapshot's trees from its sandbox's disk, laid into the disk of
    /// each sandbox made from it (see `host::snapshot`).
    #[serde(default)]
    pub seeds: Vec<Seed>,
    /// A snapshot of a sandbox on the `host` image: its root is the
    /// host's, `layers` is empty.
    #[serde(default)]
    pub host_root: bool,
}

/// A captured tree in the store's staging area, removed when dropped
/// unless it was published (`ImageStore::publish_staged`).
pub struct Staged {
    dir: PathBuf,
    pub bytes: u64,
}

impl Drop for Staged {
    fn drop(&mut self) {
        if self.dir.exists() {
            let _ = remove_tree(&self.dir);
        }
    }
}

/// One tree of a snapshot: a directory of a sandbox's disk (`workspace`,
/// `home`, …) and the layer that holds it, its owners shifted to 0.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Seed {
    pub dir: String,
    pub layer: String,
}

/// Why an import failed, for the caller's status code.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    TooLarge(String),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

pub struct ImageStore {
    root: PathBuf,
    /// Most bytes an image may unpack to.
    max_bytes: u64,
    /// Held while the catalogue or the set of layers changes.
    catalogue: Mutex<()>,
    /// Layers captured for an image not recorded yet: kept from `gc`.
    pending: Mutex<HashSet<String>>,
}

pub use talon_core::image::valid_name;

use talon_core::time::now_ms;

fn invalid(e: impl std::fmt::Display) -> ImportError {
    ImportError::Invalid(format!("{e:#}"))
}

impl ImageStore {
    pub fn new(data_dir: &Path, max_bytes: u64) -> std::io::Result<ImageStore> {
        let root = data_dir.join("images");
        for d in ["layers", "refs", "flat", "tmp"] {
            std::fs::create_dir_all(root.join(d))?;
            std::fs::set_permissions(root.join(d), std::fs::Permissions::from_mode(0o700))?;
        }
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o700))?;
        // Whatever an interrupted import left.
        for e in std::fs::read_dir(root.join("tmp"))?.flatten() {
            let _ = remove_tree(&e.path());
        }
        Ok(ImageStore {
            root,
            max_bytes,
            catalogue: Mutex::new(()),
            pending: Mutex::new(HashSet::new()),
        })
    }

    /// Where uploads are spooled before import.
    pub fn tmp_dir(&self) -> PathBuf {
        self.root.join("tmp")
    }

    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    fn ref_path(&self, name: &str) -> PathBuf {
        self.root
            .join("refs")
            .join(&sha256_hex(name.as_bytes())[..32])
    }

    pub fn layer_dir(&self, diff_id: &str) -> PathBuf {
        self.root.join("layers").join(diff_id)
    }

    pub fn has_layer(&self, diff_id: &str) -> bool {
        self.layer_dir(diff_id).is_dir()
    }

    /// Adds layer `diff_id` as `fill` makes it in an empty staging
    /// directory (returning its bytes), pinned until an image that holds
    /// it is recorded (`put_ref`). Blocking.
    pub fn adopt_layer(
        &self,
        diff_id: &str,
        fill: impl FnOnce(&Path) -> anyhow::Result<u64>,
    ) -> anyhow::Result<()> {
        let staged = Staged {
            dir: self
                .tmp_dir()
                .join(format!("adopt-{}", uuid::Uuid::new_v4().simple())),
            bytes: 0,
        };
        std::fs::create_dir(&staged.dir)?;
        let bytes = fill(&staged.dir)?;
        let _g = self.catalogue.lock().expect("lock");
        self.pending
            .lock()
            .expect("lock")
            .insert(diff_id.to_string());
        publish(&staged.dir, &self.layer_dir(diff_id))?;
        std::fs::write(
            self.root.join("layers").join(format!("{diff_id}.size")),
            bytes.to_string(),
        )?;
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<ImageRef> {
        let raw = std::fs::read(self.ref_path(name)).ok()?;
        serde_json::from_slice::<ImageRef>(&raw)
            .ok()
            .filter(|r| r.name == name)
    }

    pub fn list(&self) -> Vec<ImageRef> {
        let mut out: Vec<ImageRef> = std::fs::read_dir(self.root.join("refs"))
            .map(|d| {
                d.flatten()
                    .filter_map(|e| serde_json::from_slice(&std::fs::read(e.path()).ok()?).ok())
                    .collect()
            })
            .unwrap_or_default();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// Imports the archive at `path` (a tar, or a gzip of one) as `name`,
    /// replacing an image of that name. Blocking: run it off the runtime.
    pub fn import(&self, name: &str, path: &Path) -> Result<ImageRef, ImportError> {
        if !valid_name(name) {
            return Err(ImportError::Invalid(format!(
                "invalid image name {name:?}: letters, digits and ._-:/@+, at most 255, not \"host\""
            )));
        }
        let file = std::fs::File::open(path)
            .map_err(|e| ImportError::Invalid(format!("{}: {e}", path.display())))?;
        let mut head = [0u8; 2];
        let gz =
            std::os::unix::fs::FileExt::read_at(&file, &mut head, 0)? == 2 && head == [0x1f, 0x8b];
        // A compressed outer tar is expanded once, to an unnamed file, so
        // blobs can be read in place.
        let file = if gz {
            let t = tempfile::tempfile_in(self.tmp_dir())?;
            let mut w = std::io::BufWriter::new(&t);
            let mut r = std::io::Read::take(
                flate2::read::MultiGzDecoder::new(file),
                self.max_bytes.saturating_mul(2),
            );
            std::io::copy(&mut r, &mut w).map_err(invalid)?;
            drop(w);
            t
        } else {
            file
        };
        let archive = Archive::index(file).map_err(invalid)?;
        let m = archive.manifest().map_err(invalid)?;
        let mut total = 0u64;
        let mut layers = Vec::new();
        for l in &m.layers {
            let diff = digest_hex(&l.diff_id).map_err(invalid)?.to_string();
            let bytes = self.unpack_layer(
                &archive,
                l,
                &diff,
                self.max_bytes - total.min(self.max_bytes),
            )?;
            total += bytes;
            if total > self.max_bytes {
                return Err(ImportError::TooLarge(format!(
                    "the image unpacks to more than {} bytes",
                    self.max_bytes
                )));
            }
            layers.push(diff);
        }
        let r = ImageRef {
            name: name.to_string(),
            digest: m.digest,
            layers,
            config: m.config,
            size_bytes: total,
            created_ms: now_ms(),
            seeds: Vec::new(),
            host_root: false,
        };
        self.put_ref(&r)?;
        Ok(r)
    }

    /// Records an image (replacing one of its name), atomically.
    pub fn put_ref(&self, r: &ImageRef) -> Result<(), ImportError> {
        let _g = self.catalogue.lock().expect("lock");
        let tmp = self
            .tmp_dir()
            .join(format!("ref-{}", uuid::Uuid::new_v4().simple()));
        std::fs::write(&tmp, serde_json::to_vec(r).map_err(invalid)?)?;
        std::fs::rename(&tmp, self.ref_path(&r.name))?;
        self.unpin(r.layers.iter().chain(r.seeds.iter().map(|s| &s.layer)));
        Ok(())
    }

    /// Lets `gc` remove captured layers no image recorded (a snapshot
    /// that failed after its captures).
    pub fn unpin<'a>(&self, layers: impl IntoIterator<Item = &'a String>) {
        let mut p = self.pending.lock().expect("lock");
        for l in layers {
            p.remove(l);
        }
    }

    /// Captures a tree a sandbox wrote (see `capture`) into the store's
    /// staging area, at most `budget` bytes: the copy alone, what a
    /// snapshot does while its sandbox is frozen. Blocking.
    pub fn stage(
        &self,
        src: &Path,
        shift: capture::Shift,
        budget: u64,
    ) -> Result<Staged, ImportError> {
        self.stage_counted(src, shift, budget, &std::sync::atomic::AtomicU64::new(0))
    }

    /// `stage`, adding the bytes it copies to `counter` as it goes.
    pub fn stage_counted(
        &self,
        src: &Path,
        shift: capture::Shift,
        budget: u64,
        counter: &std::sync::atomic::AtomicU64,
    ) -> Result<Staged, ImportError> {
        let mut staged = Staged {
            dir: self
                .tmp_dir()
                .join(format!("capture-{}", uuid::Uuid::new_v4().simple())),
            bytes: 0,
        };
        std::fs::create_dir(&staged.dir)?;
        let c = capture::capture_counted(src, &staged.dir, shift, budget, counter).map_err(
            |e| match e {
                capture::CaptureError::TooLarge(n) => {
                    ImportError::TooLarge(format!("the snapshot holds more than {n} bytes"))
                }
                capture::CaptureError::Refused(m) => ImportError::Invalid(m),
                capture::CaptureError::Io(e) => ImportError::Io(e),
            },
        )?;
        staged.bytes = c.bytes;
        Ok(staged)
    }

    /// The second half: the staged tree's diff id (hashing it, which
    /// needs no freeze), content addressed like an imported layer
    /// (`overlay_diff_id`), then the layer published and pinned: kept from
    /// `gc` until an image that holds it is recorded (`put_ref`) or it is
    /// unpinned. Its diff id and size.
    pub fn publish_staged(&self, staged: Staged) -> Result<(String, u64), ImportError> {
        let diff = pack::overlay_diff_id(&staged.dir).map_err(invalid)?;
        let _g = self.catalogue.lock().expect("lock");
        self.pending.lock().expect("lock").insert(diff.clone());
        publish(&staged.dir, &self.layer_dir(&diff))?;
        std::fs::write(
            self.root.join("layers").join(format!("{diff}.size")),
            staged.bytes.to_string(),
        )?;
        Ok((diff, staged.bytes))
    }

    /// Unpacks one layer unless the store has it; its unpacked size.
    fn unpack_layer(
        &self,
        a: &Archive,
        l: &archive::LayerBlob,
        diff: &str,
        budget: u64,
    ) -> Result<u64, ImportError> {
        let dest = self.layer_dir(diff);
        let size_file = self.root.join("layers").join(format!("{diff}.size"));
        if let Ok(sz) = std::fs::read_to_string(&size_file)
            && dest.is_dir()
        {
            return Ok(sz.trim().parse().unwrap_or(0));
        }
        let staging = self
            .tmp_dir()
            .join(format!("layer-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir(&staging)?;
        let done = (|| {
            let mut blob = Hashing::new(a.reader(&l.path).map_err(invalid)?);
            let mut tar = Hashing::new(archive::decompress(&mut blob)?);
            let unpacked = unpack::unpack(&mut tar, &staging, budget).map_err(|e| match e {
                unpack::Refused::TooLarge(_) => ImportError::TooLarge(format!(
                    "the image unpacks to more than {} bytes",
                    self.max_bytes
                )),
                e => ImportError::Invalid(format!("layer {}: {e}", l.diff_id)),
            })?;
            let (got, _) = tar.finish()?;
            if got != diff {
                return Err(ImportError::Invalid(format!(
                    "layer {} does not match its diff id (its content hashes to sha256:{got})",
                    l.path
                )));
            }
            if let Some(want) = &l.blob_digest {
                let (got, _) = blob.finish()?;
                if Some(got.as_str()) != digest_hex(want).ok() {
                    return Err(ImportError::Invalid(format!(
                        "blob {} does not match its digest {want}",
                        l.path
                    )));
                }
            }
            Ok(unpacked.bytes)
        })();
        let bytes = match done {
            Ok(b) => b,
            Err(e) => {
                let _ = remove_tree(&staging);
                return Err(e);
            }
        };
        let _g = self.catalogue.lock().expect("lock");
        publish(&staging, &dest)?;
        std::fs::write(
            self.root.join("layers").join(format!("{diff}.size")),
            bytes.to_string(),
        )?;
        Ok(bytes)
    }

    /// Forgets an image and removes what no image and no sandbox in
    /// `in_use` (diff ids) still needs. False when it was not here.
    pub fn delete(&self, name: &str, in_use: &HashSet<String>) -> std::io::Result<bool> {
        let existed = {
            let _g = self.catalogue.lock().expect("lock");
            match std::fs::remove_file(self.ref_path(name)) {
                Ok(()) => true,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
                Err(e) => return Err(e),
            }
        };
        self.gc(in_use)?;
        Ok(existed)
    }

    /// Removes layers and flattened trees no image and no sandbox uses.
    pub fn gc(&self, in_use: &HashSet<String>) -> std::io::Result<()> {
        let _g = self.catalogue.lock().expect("lock");
        let refs = self.list();
        let mut keep: HashSet<String> = in_use.clone();
        keep.extend(self.pending.lock().expect("lock").iter().cloned());
        keep.extend(refs.iter().flat_map(|r| {
            r.layers
                .iter()
                .chain(r.seeds.iter().map(|s| &s.layer))
                .cloned()
        }));
        for e in std::fs::read_dir(self.root.join("layers"))?.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            let id = n.trim_end_matches(".size");
            if !keep.contains(id) {
                if e.path().is_dir() {
                    remove_tree(&e.path())?;
                } else {
                    std::fs::remove_file(e.path())?;
                }
            }
        }
        let flats: HashSet<String> = refs.iter().map(|r| flat_name(&r.layers)).collect();
        for e in std::fs::read_dir(self.root.join("flat"))?.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if !flats.contains(&n) && !in_use.contains(&format!("flat:{n}")) {
                remove_tree(&e.path())?;
            }
        }
        Ok(())
    }

    /// The image's layers merged into one tree with hardlinks (built once),
    /// plus the mount points a read-only sandbox root needs.
    pub fn flat(&self, layers: &[String]) -> std::io::Result<PathBuf> {
        let dest = self.root.join("flat").join(flat_name(layers));
        if dest.is_dir() {
            return Ok(dest);
        }
        let staging = self
            .tmp_dir()
            .join(format!("flat-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir(&staging)?;
        std::fs::set_permissions(&staging, std::fs::Permissions::from_mode(0o755))?;
        let built = (|| {
            let out = Tree::open(&staging)?;
            for l in layers {
                let src = Tree::open(&self.layer_dir(l))?;
                merge(&src, &out, &RelPath::parse(b"").expect("root"))?;
            }
            for d in [
                "proc",
                "dev",
                "sys",
                "tmp",
                "root",
                "workspace",
                "run/talon",
                "run/secrets",
                "var/log/talon",
                ".talon/run",
            ] {
                let p = RelPath::parse(d.as_bytes()).expect("path");
                if out
                    .stat(&p)?
                    .is_some_and(|s| FileType::from_raw_mode(s.st_mode) != FileType::Directory)
                {
                    out.remove(&p)?;
                }
                out.dir_all(&p)?;
            }
            for f in [
                ".talon/agent",
                "etc/hosts",
                "etc/hostname",
                "etc/resolv.conf",
            ] {
                let p = RelPath::parse(f.as_bytes()).expect("path");
                let (parent, leaf) = p.split().expect("file");
                let dir = out.dir_all(&parent)?;
                beneath::remove_entry(&dir, leaf)?;
                rustix::fs::openat(
                    &dir,
                    name(leaf),
                    OFlags::CREATE | OFlags::WRONLY | OFlags::CLOEXEC,
                    Mode::from_raw_mode(0o644),
                )?;
            }
            Ok::<_, std::io::Error>(())
        })();
        if let Err(e) = built {
            let _ = remove_tree(&staging);
            return Err(e);
        }
        let _g = self.catalogue.lock().expect("lock");
        publish(&staging, &dest)?;
        Ok(dest)
    }
}

/// Moves a finished tree into place, unless another import or sandbox
/// put the same content there meanwhile. Call with the catalogue lock.
fn publish(staging: &Path, dest: &Path) -> std::io::Result<()> {
    if dest.is_dir() {
        let _ = remove_tree(staging);
        Ok(())
    } else {
        std::fs::rename(staging, dest)
    }
}

pub fn flat_name(layers: &[String]) -> String {
    sha256_hex(layers.join(",").as_bytes())[..32].to_string()
}

fn open_dir(t: &Tree, rel: &RelPath) -> std::io::Result<OwnedFd> {
    t.open_at(rel, OFlags::RDONLY | OFlags::DIRECTORY)
}

/// Applies one layer (overlay format) onto a merged tree: whiteouts
/// remove, opaque directories replace, everything else is hardlinked.
fn merge(src: &Tree, out: &Tree, rel: &RelPath) -> std::io::Result<()> {
    let sdir = open_dir(src, rel)?;
    let odir = out.dir_all(rel)?;
    let mut opaque = [0u8; 1];
    if rustix::fs::fgetxattr(&sdir, "trusted.overlay.opaque", &mut opaque[..])
        .is_ok_and(|n| n == 1 && opaque[0] == b'y')
    {
        let o = open_dir(out, rel)?;
        for n in beneath::read_names(&o)? {
            beneath::remove_entry(&odir, &n)?;
        }
    }
    for n in beneath::read_names(&sdir)? {
        let st = rustix::fs::statat(&sdir, name(&n), AtFlags::SYMLINK_NOFOLLOW)?;
        let ft = FileType::from_raw_mode(st.st_mode);
        let existing = rustix::fs::statat(&odir, name(&n), AtFlags::SYMLINK_NOFOLLOW).ok();
        let child = rel.join(&n);
        match ft {
            FileType::CharacterDevice if st.st_rdev == 0 => {
                beneath::remove_entry(&odir, &n)?;
            }
            FileType::Directory => {
                if existing
                    .is_some_and(|e| FileType::from_raw_mode(e.st_mode) != FileType::Directory)
                {
                    beneath::remove_entry(&odir, &n)?;
                }
                merge(src, out, &child)?;
                let o = open_dir(out, &child)?;
                rustix::fs::fchown(
                    &o,
                    Some(rustix::fs::Uid::from_raw(st.st_uid)),
                    Some(rustix::fs::Gid::from_raw(st.st_gid)),
                )?;
                rustix::fs::fchmod(&o, Mode::from_raw_mode(st.st_mode & 0o7777))?;
            }
            _ => {
                if existing.is_some() {
                    beneath::remove_entry(&odir, &n)?;
                }
                rustix::fs::linkat(&sdir, name(&n), &odir, name(&n), AtFlags::empty())?;
            }
        }
    }
    Ok(())
}

/// Removes a directory tree of the store without following symlinks.
pub fn remove_tree(p: &Path) -> std::io::Result<()> {
    let (Some(parent), Some(leaf)) = (p.parent(), p.file_name()) else {
        return Err(std::io::Error::other("refusing to remove /"));
    };
    let dir = rustix::fs::open(
        parent,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    use std::os::unix::ffi::OsStrExt;
    beneath::remove_entry(&dir, leaf.as_bytes())
}
