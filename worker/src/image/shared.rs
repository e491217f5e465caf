//! Snapshots on the `shared` workspace backend live on the shared storage
//! too, so they outlive the worker that took them: a sandbox created from
//! one, or moved with one as its image, starts on any worker of that
//! backend. The worker that takes a snapshot keeps it in its own store as
//! everywhere else, and publishes it here; another worker copies it into
//! its store the first time it needs it.
//!
//! ```text
//! SHARED/images/
//!   layers/<diff id>.tar   one layer as an OCI layer tar (whiteouts as .wh.)
//!   refs/<hash of name>    the image record (JSON), written last
//!   tmp/                   writes in progress, each under its own name
//! SHARED/<sandbox id>/image.json   the image a sandbox on the shared disk
//!                                  was built from (its pin; see below)
//! ```
//!
//! Only regular files and renames: what NFS, CephFS or JuiceFS all keep
//! (a layer's overlay whiteouts and opaque directories go through the tar
//! format, as an imported image's do). No locks either: a layer is written
//! under a temporary name and renamed into place, so two workers that
//! publish the same one at once both finish with a whole file. A deleted
//! snapshot's record goes at once; a layer goes only when no record and
//! no sandbox's pin names it and it was not touched for `LAYER_GRACE` (a
//! publish under way touches the layers it found before it writes its
//! record). The pin is the image record a sandbox on the shared disk was
//! built from, beside its disk, so the sandbox can move after its
//! snapshot was deleted (a fork's snapshot is, once its forks run); it
//! goes with the sandbox's directory.

use super::{ImageRef, ImageStore, pack, unpack};
use anyhow::Context;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How long an unreferenced layer stays: longer than any publish takes
/// between touching a layer it reuses and writing the record that names it.
pub const LAYER_GRACE: Duration = Duration::from_secs(600);

/// A sandbox's pin, in its directory on the shared storage.
pub const PIN_FILE: &str = "image.json";

#[derive(Debug)]
pub struct SharedImages {
    root: PathBuf,
    /// The shared directory, whose sandbox directories hold the pins.
    disks: PathBuf,
}

impl SharedImages {
    /// The store under `shared` (the `--shared-workspaces` directory).
    pub fn new(shared: &Path) -> std::io::Result<SharedImages> {
        let root = shared.join("images");
        for d in ["layers", "refs", "tmp"] {
            std::fs::create_dir_all(root.join(d))?;
        }
        std::fs::set_permissions(&root, std::os::unix::fs::PermissionsExt::from_mode(0o700))?;
        Ok(SharedImages {
            root,
            disks: shared.to_path_buf(),
        })
    }

    fn ref_path(&self, name: &str) -> PathBuf {
        self.root
            .join("refs")
            .join(&super::archive::sha256_hex(name.as_bytes())[..32])
    }

    fn layer_path(&self, diff: &str) -> PathBuf {
        self.root.join("layers").join(format!("{diff}.tar"))
    }

    fn tmp(&self) -> PathBuf {
        self.root
            .join("tmp")
            .join(uuid::Uuid::new_v4().simple().to_string())
    }

    /// The record of snapshot `name`, if it was published.
    pub fn get(&self, name: &str) -> Option<ImageRef> {
        read_ref(&self.ref_path(name)).filter(|r| r.name == name)
    }

    /// Publishes image `r` of `store`: its layers the shared storage
    /// lacks, then its record. Blocking.
    pub fn publish(&self, store: &ImageStore, r: &ImageRef) -> anyhow::Result<()> {
        for diff in layers_of(r) {
            let dest = self.layer_path(diff);
            if dest.exists() {
                // Kept from a collection running meanwhile.
                let f = std::fs::File::options().append(true).open(&dest)?;
                f.set_modified(SystemTime::now())?;
                continue;
            }
            let tmp = self.tmp();
            let out = std::fs::File::create(&tmp)?;
            let written = (|| {
                let mut w = std::io::BufWriter::new(&out);
                pack::layer_tar_of(&store.layer_dir(diff), &mut w, true)?;
                std::io::Write::flush(&mut w)?;
                drop(w);
                out.sync_all()?;
                std::fs::rename(&tmp, &dest)?;
                anyhow::Ok(())
            })();
            if written.is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
            written.with_context(|| format!("publishing layer {diff} to shared storage"))?;
        }
        write_json(&self.tmp(), &self.ref_path(&r.name), r)
    }

    /// Copies into `store` the layers of `r` it lacks, from the shared
    /// storage, and records `r` there. Blocking.
    pub fn fetch(&self, store: &ImageStore, r: &ImageRef) -> anyhow::Result<()> {
        for diff in layers_of(r) {
            anyhow::ensure!(
                diff.len() == 64 && diff.bytes().all(|b| b.is_ascii_hexdigit()),
                "image {:?} names a layer {diff:?} that is not a diff id",
                r.name
            );
            if store.has_layer(diff) {
                continue;
            }
            let src = self.layer_path(diff);
            let file = std::fs::File::open(&src).with_context(|| {
                format!(
                    "layer {diff} of image {:?} is not on the shared storage",
                    r.name
                )
            })?;
            store.adopt_layer(diff, |dir| {
                unpack::unpack(std::io::BufReader::new(file), dir, store.max_bytes())
                    .map(|u| u.bytes)
                    .map_err(|e| anyhow::anyhow!("unpacking shared layer {diff}: {e}"))
            })?;
        }
        store.put_ref(r)?;
        Ok(())
    }

    /// Records that sandbox `id` (its directory on the shared storage
    /// made) was built from `r`.
    pub fn pin(&self, id: &str, r: &ImageRef) -> anyhow::Result<()> {
        anyhow::ensure!(
            talon_core::ids::valid_sandbox_id(id),
            "invalid sandbox id {id:?}"
        );
        let dir = self.disks.join(id);
        std::fs::create_dir_all(&dir)?;
        write_json(&dir.join("image.json.tmp"), &dir.join(PIN_FILE), r)
    }

    /// The image sandbox `id` was built from, when it runs on the shared
    /// disk.
    pub fn pinned(&self, id: &str) -> Option<ImageRef> {
        if !talon_core::ids::valid_sandbox_id(id) {
            return None;
        }
        read_ref(&self.disks.join(id).join(PIN_FILE))
    }

    /// Forgets snapshot `name` and collects what nothing names. Blocking.
    pub fn delete(&self, name: &str) -> std::io::Result<bool> {
        let existed = match std::fs::remove_file(self.ref_path(name)) {
            Ok(()) => true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => return Err(e),
        };
        self.gc()?;
        Ok(existed)
    }

    /// Removes layers no record and no pin names, untouched for
    /// `LAYER_GRACE`, and writes abandoned as long ago.
    pub fn gc(&self) -> std::io::Result<()> {
        let mut keep = HashSet::new();
        let refs = std::fs::read_dir(self.root.join("refs"))?
            .flatten()
            .map(|e| e.path());
        let pins = std::fs::read_dir(&self.disks)?
            .flatten()
            .map(|e| e.path().join(PIN_FILE));
        for p in refs.chain(pins) {
            if let Some(r) = read_ref(&p) {
                keep.extend(layers_of(&r).map(str::to_string));
            } else if p.exists() {
                // A record that does not read could name anything.
                tracing::warn!(path = %p.display(), "unreadable image record on shared storage; nothing collected");
                return Ok(());
            }
        }
        let old = |p: &Path| {
            std::fs::metadata(p)
                .and_then(|m| m.modified())
                .is_ok_and(|t| t.elapsed().is_ok_and(|a| a > LAYER_GRACE))
        };
        for e in std::fs::read_dir(self.root.join("layers"))?.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            let diff = n.trim_end_matches(".tar");
            if !keep.contains(diff) && old(&e.path()) {
                std::fs::remove_file(e.path())?;
            }
        }
        for e in std::fs::read_dir(self.root.join("tmp"))?.flatten() {
            if old(&e.path()) {
                let _ = std::fs::remove_file(e.path());
            }
        }
        Ok(())
    }
}

/// Every layer an image needs: its root's and its seeds'.
fn layers_of(r: &ImageRef) -> impl Iterator<Item = &str> {
    r.layers
        .iter()
        .chain(r.seeds.iter().map(|s| &s.layer))
        .map(String::as_str)
}

fn read_ref(p: &Path) -> Option<ImageRef> {
    serde_json::from_slice(&std::fs::read(p).ok()?).ok()
}

/// Writes `v` at `dest` whole or not at all.
fn write_json(tmp: &Path, dest: &Path, v: &ImageRef) -> anyhow::Result<()> {
    let f = std::fs::File::create(tmp)?;
    let done = (|| {
        std::io::Write::write_all(&mut &f, &serde_json::to_vec(v)?)?;
        f.sync_all()?;
        std::fs::rename(tmp, dest)?;
        anyhow::Ok(())
    })();
    if done.is_err() {
        let _ = std::fs::remove_file(tmp);
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::Seed;

    fn layer(store: &ImageStore, files: &[(&str, &str)]) -> String {
        let src = tempfile::tempdir().unwrap();
        for (n, c) in files {
            std::fs::write(src.path().join(n), c).unwrap();
        }
        let staged = store
            .stage(
                src.path(),
                crate::image::capture::Shift {
                    from: 0,
                    to: 0,
                    len: 65536,
                },
                u64::MAX,
            )
            .unwrap();
        store.publish_staged(staged).unwrap().0
    }

    #[test]
    fn a_snapshot_published_by_one_worker_is_fetched_by_another() {
        let d = tempfile::tempdir().unwrap();
        let shared = d.path().join("shared");
        let a = ImageStore::new(&d.path().join("a"), 1 << 30).unwrap();
        let b = ImageStore::new(&d.path().join("b"), 1 << 30).unwrap();
        let root = layer(&a, &[("f", "root")]);
        let seed = layer(&a, &[("mine", "work")]);
        let r = ImageRef {
            name: "snapshot/snp_1".into(),
            digest: "sha256:x".into(),
            layers: vec![root.clone()],
            config: Default::default(),
            size_bytes: 8,
            created_ms: 1,
            seeds: vec![Seed {
                dir: "workspace".into(),
                layer: seed.clone(),
            }],
            host_root: false,
        };
        a.put_ref(&r).unwrap();
        let sa = SharedImages::new(&shared).unwrap();
        sa.publish(&a, &r).unwrap();
        // Worker A is gone; B finds the record and copies the layers.
        let sb = SharedImages::new(&shared).unwrap();
        let got = sb.get("snapshot/snp_1").unwrap();
        assert_eq!(got, r);
        assert!(sb.get("snapshot/other").is_none());
        sb.fetch(&b, &got).unwrap();
        assert_eq!(b.get("snapshot/snp_1").unwrap(), r);
        assert_eq!(
            std::fs::read_to_string(b.layer_dir(&seed).join("mine")).unwrap(),
            "work"
        );
        // A sandbox built from it pins it; the record is deleted; the
        // pinned layers stay, and a pin alone still fetches.
        std::fs::create_dir_all(shared.join("sbx_1")).unwrap();
        sb.pin("sbx_1", &r).unwrap();
        let old = SystemTime::now() - 2 * LAYER_GRACE;
        for e in std::fs::read_dir(shared.join("images/layers")).unwrap() {
            let f = std::fs::File::options()
                .append(true)
                .open(e.unwrap().path())
                .unwrap();
            f.set_modified(old).unwrap();
        }
        assert!(sb.delete("snapshot/snp_1").unwrap());
        assert!(sb.get("snapshot/snp_1").is_none());
        let c = ImageStore::new(&d.path().join("c"), 1 << 30).unwrap();
        sb.fetch(&c, &sb.pinned("sbx_1").unwrap()).unwrap();
        assert!(c.has_layer(&root));
        // The sandbox goes with its directory: now the layers go too.
        std::fs::remove_dir_all(shared.join("sbx_1")).unwrap();
        sb.gc().unwrap();
        assert_eq!(
            std::fs::read_dir(shared.join("images/layers"))
                .unwrap()
                .count(),
            0
        );
        let e = sb.fetch(&c, &r).map(|_| ());
        assert!(e.is_ok(), "c holds them already: {e:?}");
        let fresh = ImageStore::new(&d.path().join("d"), 1 << 30).unwrap();
        let e = sb.fetch(&fresh, &r).unwrap_err().to_string();
        assert!(e.contains("is not on the shared storage"), "{e}");
    }
}
