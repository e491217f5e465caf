//! Builds a one-layer image archive from a root filesystem directory (a
//! `debootstrap` tree, say): an OCI image layout (gzip layer) or a
//! `docker save` tarball (plain layer). This is how images are made on a
//! machine with no registry and no Docker engine; `talon image pack`
//! exposes it. Device nodes are left out (an importer refuses them and a
//! sandbox gets its own /dev), as is anything under /proc, /sys and /dev.

use super::archive::sha256_hex;
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::Path;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Oci,
    Docker,
}

impl std::str::FromStr for Format {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> anyhow::Result<Format> {
        match s {
            "oci" => Ok(Format::Oci),
            "docker" => Ok(Format::Docker),
            _ => anyhow::bail!("unknown archive format {s:?} (oci or docker)"),
        }
    }
}

/// What to put in the image's config.
#[derive(Clone, Debug, Default)]
pub struct PackOptions {
    /// The reference recorded in the archive, e.g. `debian:bookworm`.
    pub reference: String,
    pub env: Vec<String>,
    pub working_dir: String,
}

struct HashWriter<W> {
    inner: W,
    hasher: Sha256,
    bytes: u64,
}

impl<W: Write> Write for HashWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// The diff id (hex) of a layer in the store's overlay format (see
/// `capture`): the digest of the tar it exports as, its whiteouts as
/// `.wh.` entries and opaque directories as `.wh..wh..opq`, so two
/// layers share an id only when their content is the same.
pub fn overlay_diff_id(layer: &Path) -> anyhow::Result<String> {
    Ok(layer_tar_of(layer, std::io::sink(), true)?.0)
}

/// Tars `rootfs` into `out` (sorted, symlinks as symlinks, hardlinks
/// kept), returning the digest and size of the uncompressed tar.
fn layer_tar(rootfs: &Path, out: impl Write) -> anyhow::Result<(String, u64)> {
    layer_tar_of(rootfs, out, false)
}

/// `overlay`: the tree is a layer in overlay format (whiteouts become OCI
/// whiteout entries) rather than a plain root filesystem.
pub(crate) fn layer_tar_of(
    rootfs: &Path,
    out: impl Write,
    overlay: bool,
) -> anyhow::Result<(String, u64)> {
    let mut w = HashWriter {
        inner: out,
        hasher: Sha256::new(),
        bytes: 0,
    };
    {
        let mut b = tar::Builder::new(&mut w);
        b.follow_symlinks(false);
        let mut seen: std::collections::HashMap<(u64, u64), std::path::PathBuf> =
            std::collections::HashMap::new();
        add_dir(&mut b, rootfs, Path::new(""), &mut seen, overlay)?;
        b.finish()?;
    }
    Ok((hex::encode(w.hasher.finalize()), w.bytes))
}

fn add_dir<W: Write>(
    b: &mut tar::Builder<W>,
    root: &Path,
    rel: &Path,
    seen: &mut std::collections::HashMap<(u64, u64), std::path::PathBuf>,
    overlay: bool,
) -> anyhow::Result<()> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let mut names: Vec<_> = std::fs::read_dir(root.join(rel))?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<Result<_, _>>()?;
    names.sort();
    for n in names {
        let r = rel.join(&n);
        let full = root.join(&r);
        let md = std::fs::symlink_metadata(&full)?;
        let ft = md.file_type();
        if overlay && ft.is_char_device() && md.rdev() == 0 {
            let mut wh = std::ffi::OsString::from(".wh.");
            wh.push(&n);
            append_empty(b, &rel.join(wh))?;
            continue;
        }
        if ft.is_block_device() || ft.is_char_device() || ft.is_socket() {
            continue;
        }
        if ft.is_fifo() {
            // By hand: tar's own path for special files puts the host
            // path in the entry.
            let mut h = tar::Header::new_gnu();
            h.set_metadata(&md);
            h.set_entry_type(tar::EntryType::Fifo);
            h.set_size(0);
            b.append_data(&mut h, &r, std::io::empty())?;
            continue;
        }
        if ft.is_file() && md.nlink() > 1 {
            if let Some(first) = seen.get(&(md.dev(), md.ino())) {
                let mut h = tar::Header::new_gnu();
                h.set_metadata(&md);
                h.set_entry_type(tar::EntryType::Link);
                h.set_size(0);
                b.append_link(&mut h, &r, first)?;
                continue;
            }
            seen.insert((md.dev(), md.ino()), r.clone());
        }
        b.append_path_with_name(&full, &r)?;
        let pseudo =
            rel.as_os_str().is_empty() && matches!(n.to_str(), Some("proc" | "sys" | "dev"));
        if ft.is_dir() && overlay {
            let mut v = [0u8; 1];
            if rustix::fs::getxattr(&full, "trusted.overlay.opaque", &mut v[..])
                .is_ok_and(|k| k == 1 && v[0] == b'y')
            {
                append_empty(b, &r.join(".wh..wh..opq"))?;
            }
        }
        if ft.is_dir() && !pseudo {
            add_dir(b, root, &r, seen, overlay)?;
        }
    }
    Ok(())
}

/// An empty regular file entry (an OCI whiteout marker).
fn append_empty<W: Write>(b: &mut tar::Builder<W>, path: &Path) -> anyhow::Result<()> {
    let mut h = tar::Header::new_gnu();
    h.set_size(0);
    h.set_mode(0o644);
    h.set_entry_type(tar::EntryType::Regular);
    h.set_mtime(0);
    b.append_data(&mut h, path, std::io::empty())?;
    Ok(())
}

fn gzip_file(src: &Path, dst: &Path) -> anyhow::Result<(String, u64)> {
    let out = std::fs::File::create(dst)?;
    let mut w = HashWriter {
        inner: out,
        hasher: Sha256::new(),
        bytes: 0,
    };
    {
        let mut gz = flate2::write::GzEncoder::new(&mut w, flate2::Compression::fast());
        std::io::copy(&mut std::fs::File::open(src)?, &mut gz)?;
        gz.finish()?;
    }
    Ok((hex::encode(w.hasher.finalize()), w.bytes))
}

fn append_bytes<W: Write>(b: &mut tar::Builder<W>, name: &str, data: &[u8]) -> anyhow::Result<()> {
    let mut h = tar::Header::new_gnu();
    h.set_size(data.len() as u64);
    h.set_mode(0o644);
    h.set_entry_type(tar::EntryType::Regular);
    h.set_mtime(0);
    b.append_data(&mut h, name, data)?;
    Ok(())
}

fn append_file<W: Write>(b: &mut tar::Builder<W>, name: &str, path: &Path) -> anyhow::Result<()> {
    let mut f = std::fs::File::open(path)?;
    let mut h = tar::Header::new_gnu();
    h.set_size(f.metadata()?.len());
    h.set_mode(0o644);
    h.set_entry_type(tar::EntryType::Regular);
    h.set_mtime(0);
    b.append_data(&mut h, name, &mut f)?;
    Ok(())
}

/// Writes an image archive of `rootfs` to `out`.
pub fn pack(rootfs: &Path, out: &Path, format: Format, opts: &PackOptions) -> anyhow::Result<()> {
    let scratch = tempfile::Builder::new()
        .prefix(".talon-pack-")
        .tempdir_in(out.parent().unwrap_or(Path::new(".")))?;
    let layer = scratch.path().join("layer.tar");
    let (diff_hex, _) = layer_tar(rootfs, std::fs::File::create(&layer)?)?;
    let mut env = opts.env.clone();
    if !env.iter().any(|e| e.starts_with("PATH=")) {
        env.push("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".into());
    }
    let config = serde_json::json!({
        "architecture": match std::env::consts::ARCH { "x86_64" => "amd64", "aarch64" => "arm64", a => a },
        "os": "linux",
        "config": { "Env": env, "WorkingDir": opts.working_dir },
        "rootfs": { "type": "layers", "diff_ids": [format!("sha256:{diff_hex}")] },
    });
    let config = serde_json::to_vec(&config)?;
    let config_hex = sha256_hex(&config);
    let mut b = tar::Builder::new(std::io::BufWriter::new(std::fs::File::create(out)?));
    match format {
        Format::Oci => {
            let gz = scratch.path().join("layer.tar.gz");
            let (blob_hex, blob_size) = gzip_file(&layer, &gz)?;
            let manifest = serde_json::to_vec(&serde_json::json!({
                "schemaVersion": 2,
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "config": {
                    "mediaType": "application/vnd.oci.image.config.v1+json",
                    "digest": format!("sha256:{config_hex}"),
                    "size": config.len(),
                },
                "layers": [{
                    "mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                    "digest": format!("sha256:{blob_hex}"),
                    "size": blob_size,
                }],
            }))?;
            let manifest_hex = sha256_hex(&manifest);
            let index = serde_json::to_vec(&serde_json::json!({
                "schemaVersion": 2,
                "mediaType": "application/vnd.oci.image.index.v1+json",
                "manifests": [{
                    "mediaType": "application/vnd.oci.image.manifest.v1+json",
                    "digest": format!("sha256:{manifest_hex}"),
                    "size": manifest.len(),
                    "annotations": { "org.opencontainers.image.ref.name": opts.reference },
                }],
            }))?;
            append_bytes(&mut b, "oci-layout", br#"{"imageLayoutVersion":"1.0.0"}"#)?;
            append_bytes(&mut b, "index.json", &index)?;
            append_bytes(&mut b, &format!("blobs/sha256/{manifest_hex}"), &manifest)?;
            append_bytes(&mut b, &format!("blobs/sha256/{config_hex}"), &config)?;
            append_file(&mut b, &format!("blobs/sha256/{blob_hex}"), &gz)?;
        }
        Format::Docker => {
            let manifest = serde_json::to_vec(&serde_json::json!([{
                "Config": format!("{config_hex}.json"),
                "RepoTags": if opts.reference.is_empty() { vec![] } else { vec![opts.reference.clone()] },
                "Layers": [format!("{diff_hex}/layer.tar")],
            }]))?;
            append_bytes(&mut b, &format!("{config_hex}.json"), &config)?;
            append_file(&mut b, &format!("{diff_hex}/layer.tar"), &layer)?;
            append_bytes(&mut b, "manifest.json", &manifest)?;
        }
    }
    b.into_inner()?.flush()?;
    Ok(())
}
