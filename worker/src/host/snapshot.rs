//! Filesystem snapshots: what a sandbox wrote (its root's upper layer and
//! the directories of its disk that outlive a restart) copied into the
//! image store while it is frozen, recorded as an image that new
//! sandboxes start from. Copies, not shared overlay layers: a snapshot
//! outlives its sandbox, and a fork never shares a writable byte with
//! its source or with another fork.
//!
//! Owners are shifted from the sandbox's host ids to the image's own
//! (0-based) when taken, and into the new sandbox's range when laid down,
//! like an imported image's.

use super::*;
use crate::bundle::{self, RootKind};
use crate::image::capture::{self, Shift};
use crate::image::{ImageRef, Seed, Staged};
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

/// The directories of a sandbox's disk a snapshot carries, by root kind:
/// what the sandbox may write that is not its root's overlay. `etc` is
/// left out (the worker writes the sandbox's identity there), and so are
/// the agent's logs.
pub(super) fn seed_dirs(kind: RootKind) -> &'static [&'static str] {
    match kind {
        RootKind::Host => &["workspace", "home", "root", "tmp", "var"],
        RootKind::ReadOnlyImage => &["workspace", "root", "tmp"],
        RootKind::Overlay => &["workspace"],
    }
}

/// How far a snapshot has got, for a watcher on another task: its phase,
/// the bytes of content copied, and about how many there are (the bytes
/// in use on the sandbox's disk when the copy began).
#[derive(Debug, Default)]
pub struct SnapshotProgress {
    phase: AtomicU8,
    pub copied: AtomicU64,
    pub total: AtomicU64,
}

/// The phases of a snapshot, in order.
const PHASES: [&str; 3] = ["copying", "publishing", "sharing"];

impl SnapshotProgress {
    /// "copying", "publishing" or "sharing".
    pub fn phase(&self) -> &'static str {
        PHASES[usize::from(self.phase.load(Ordering::Relaxed)).min(PHASES.len() - 1)]
    }
    fn enter(&self, phase: &str) {
        let i = PHASES.iter().position(|p| *p == phase).expect("a phase");
        self.phase.store(i as u8, Ordering::Relaxed);
    }
}

impl SandboxHost {
    /// Snapshots a running or paused sandbox's files as the image `name`,
    /// at most `max_bytes` of file content: the image, and how long the
    /// sandbox was frozen for it. A running sandbox is frozen for the copy
    /// and thawed after it, whatever happened.
    pub async fn snapshot(
        &self,
        id: &str,
        generation: i64,
        name: &str,
        max_bytes: u64,
    ) -> anyhow::Result<(ImageRef, std::time::Duration)> {
        self.snapshot_watched(id, generation, name, max_bytes, &Arc::default())
            .await
    }

    /// `snapshot`, telling `progress` how far it has got as it goes.
    pub async fn snapshot_watched(
        &self,
        id: &str,
        generation: i64,
        name: &str,
        max_bytes: u64,
        progress: &Arc<SnapshotProgress>,
    ) -> anyhow::Result<(ImageRef, std::time::Duration)> {
        if !crate::image::valid_name(name) || name.starts_with(POOL_PREFIX) {
            return Err(WorkerError::Invalid(format!(
                "invalid snapshot name {name:?}: letters, digits and ._-:/@+, at most 255, not \"host\""
            ))
            .into());
        }
        if self.images.get(name).is_some() {
            return Err(
                WorkerError::Exists(format!("an image named {name:?} is on this worker")).into(),
            );
        }
        let lock = self.lock(id).await;
        let _g = lock.lock().await;
        let h = self.fenced(id, generation).await?;
        let thaw = match h.state {
            SandboxPhase::Running => true,
            SandboxPhase::Paused => false,
            s => anyhow::bail!(
                "sandbox {id} is {s:?}: only a running or paused sandbox can be snapshotted"
            ),
        };
        disk_mounted(&self.layout(id), id)?;
        if let Ok((used, _)) = crate::usage::disk_usage(&self.layout(id).disk()) {
            progress.total.store(used, Ordering::Relaxed);
        }
        if thaw {
            self.runtime_for(h.isolation)?.pause(h.cid()).await?;
        }
        let t0 = std::time::Instant::now();
        let (images, layout, uid) = (self.images.clone(), self.layout(id), h.uid());
        let kind = h
            .image
            .as_ref()
            .map_or(RootKind::Host, HeldImage::root_kind);
        let staged = {
            let (images, progress) = (images.clone(), progress.clone());
            tokio::task::spawn_blocking(move || {
                stage(&images, &layout, kind, uid, max_bytes, &progress.copied)
            })
            .await
        };
        let frozen_for = if thaw {
            t0.elapsed()
        } else {
            std::time::Duration::ZERO
        };
        if thaw {
            // A frozen agent's idle clock ran on: the thaw counts.
            self.touch(id);
            if let Err(e) = self.runtime_for(h.isolation)?.resume(h.cid()).await {
                tracing::error!(sandbox = %id, error = %e, "could not thaw the sandbox after its snapshot");
                return Err(e);
            }
        }
        let staged = staged??;
        progress.enter("publishing");
        let (upper, seeds, bytes) =
            tokio::task::spawn_blocking(move || publish(&images, staged)).await??;
        tracing::info!(sandbox = %id, snapshot = %name, ?frozen_for, bytes, "snapshot taken");
        let base = h.image.as_ref();
        let mut layers = base.map(|i| i.layers.clone()).unwrap_or_default();
        layers.extend(upper.clone());
        let mut whole = layers.join(",");
        for s in &seeds {
            whole.push_str(&format!(";{}={}", s.dir, s.layer));
        }
        let r = ImageRef {
            name: name.to_string(),
            digest: format!(
                "sha256:{}",
                crate::image::archive::sha256_hex(whole.as_bytes())
            ),
            layers,
            config: base.map(|i| i.config.clone()).unwrap_or_default(),
            size_bytes: bytes,
            created_ms: talon_core::time::now_ms(),
            seeds,
            host_root: base.is_none(),
        };
        if let Err(e) = self.images.put_ref(&r) {
            self.images
                .unpin(r.layers.iter().chain(r.seeds.iter().map(|s| &s.layer)));
            return Err(e.into());
        }
        if let Some(shared) = self.shared_images.clone() {
            // On the shared backend the snapshot outlives this worker.
            progress.enter("sharing");
            let (images, r) = (self.images.clone(), r.clone());
            let published =
                tokio::task::spawn_blocking(move || shared.publish(&images, &r)).await?;
            if let Err(e) = published {
                let _ = self.delete_image(name);
                return Err(e.context("the snapshot could not be put on the shared storage"));
            }
        }
        Ok((r, frozen_for))
    }

    /// The record of image `name` for sandbox `id`: this worker's, else
    /// (on the shared backend) a snapshot on the shared storage or the
    /// image the sandbox was built from on its last worker, copied here
    /// first. A sandbox on the shared disk pins what it is built from.
    pub(super) async fn image_for(&self, id: &str, name: &str) -> anyhow::Result<ImageRef> {
        let Some(shared) = self.shared_images.clone() else {
            return self
                .images
                .get(name)
                .ok_or_else(|| anyhow::anyhow!("image {name:?} is not on this worker"));
        };
        let images = self.images.clone();
        let (id, name) = (id.to_string(), name.to_string());
        tokio::task::spawn_blocking(move || {
            let r = match images.get(&name) {
                Some(r) => r,
                None => {
                    let r = shared
                        .get(&name)
                        .or_else(|| shared.pinned(&id).filter(|r| r.name == name))
                        .ok_or_else(|| {
                            anyhow::anyhow!(
                                "image {name:?} is neither on this worker nor on the shared storage"
                            )
                        })?;
                    shared.fetch(&images, &r)?;
                    r
                }
            };
            shared.pin(&id, &r)?;
            Ok(r)
        })
        .await?
    }

    /// Lays a snapshot's trees into a new sandbox's disk (after
    /// `prepare`, which made each directory empty and the sandbox's).
    pub(super) fn lay_seeds(&self, l: &Layout, uid: u32, seeds: &[Seed]) -> anyhow::Result<()> {
        let shift = Shift {
            from: 0,
            to: uid,
            len: bundle::ID_RANGE,
        };
        for s in seeds {
            anyhow::ensure!(
                seed_dirs(RootKind::Host).contains(&s.dir.as_str()),
                "the snapshot names an unknown directory {:?}",
                s.dir
            );
            let dst = l.disk().join(&s.dir);
            clear_dir(&dst)?;
            capture::capture(&self.images.layer_dir(&s.layer), &dst, shift, u64::MAX)
                .map_err(|e| anyhow::anyhow!("laying down the snapshot's {}: {e}", s.dir))?;
        }
        Ok(())
    }
}

/// Empties a directory that `prepare` made (a home it seeded, say).
fn clear_dir(d: &Path) -> std::io::Result<()> {
    for e in std::fs::read_dir(d)? {
        let p = e?.path();
        if p.is_dir() && !p.is_symlink() {
            crate::image::remove_tree(&p)?;
        } else {
            std::fs::remove_file(&p)?;
        }
    }
    Ok(())
}

/// The copies, blocking, while the sandbox is frozen: the root's upper
/// layer (an overlay root), then each seed directory that exists, within
/// one byte budget. Hashing them into layers waits for the thaw
/// (`publish`).
fn stage(
    images: &ImageStore,
    l: &Layout,
    kind: RootKind,
    uid: u32,
    max_bytes: u64,
    copied: &AtomicU64,
) -> anyhow::Result<Trees> {
    let shift = Shift {
        from: uid,
        to: 0,
        len: bundle::ID_RANGE,
    };
    let mut bytes = 0u64;
    let mut copy = |dir: &Path| -> anyhow::Result<Staged> {
        let st = images
            .stage_counted(dir, shift, max_bytes.saturating_sub(bytes), copied)
            .map_err(|e| match e {
                crate::image::ImportError::TooLarge(_) => {
                    anyhow::Error::from(WorkerError::TooLarge(format!(
                        "the snapshot holds more than {max_bytes} bytes"
                    )))
                }
                crate::image::ImportError::Invalid(m) => {
                    WorkerError::Invalid(format!("cannot snapshot {}: {m}", dir.display())).into()
                }
                e => anyhow::anyhow!("snapshot of {}: {e}", dir.display()),
            })?;
        bytes += st.bytes;
        Ok(st)
    };
    let upper = match kind {
        RootKind::Overlay => Some(copy(&l.upper())?),
        _ => None,
    };
    let mut seeds = Vec::new();
    for d in seed_dirs(kind) {
        let p = l.disk().join(d);
        if p.is_dir() {
            seeds.push((d.to_string(), copy(&p)?));
        }
    }
    Ok(Trees { upper, seeds })
}

/// What `stage` copied: the root's upper layer, and the seed directories.
struct Trees {
    upper: Option<Staged>,
    seeds: Vec<(String, Staged)>,
}

/// The staged trees as layers of the store (pinned until the image is
/// recorded): the upper layer's diff id, the seeds, the bytes in all.
fn publish(images: &ImageStore, t: Trees) -> anyhow::Result<(Option<String>, Vec<Seed>, u64)> {
    let mut done: Vec<String> = Vec::new();
    let mut bytes = 0u64;
    let mut one = |s: Staged| -> anyhow::Result<String> {
        let (diff, n) = images.publish_staged(s)?;
        bytes += n;
        done.push(diff.clone());
        Ok(diff)
    };
    let all = (|| {
        let upper = t.upper.map(&mut one).transpose()?;
        let mut seeds = Vec::new();
        for (dir, s) in t.seeds {
            seeds.push(Seed {
                dir,
                layer: one(s)?,
            });
        }
        anyhow::Ok((upper, seeds))
    })();
    match all {
        Ok((upper, seeds)) => Ok((upper, seeds, bytes)),
        Err(e) => {
            images.unpin(&done);
            Err(e)
        }
    }
}
