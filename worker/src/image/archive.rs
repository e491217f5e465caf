//! Reading an image archive: an OCI image layout or a `docker save`
//! tarball. The outer tar is never extracted: it is indexed once (name →
//! offset and size of each regular file, symlinks kept as names) and the
//! blobs are read in place, so an entry's name can't write anything.
//! Every blob is checked against its digest; layers against both their
//! blob digest (OCI) and their diff id (the digest of the uncompressed
//! tar, which names the layer in the store).

use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;

/// A regular file in the archive.
#[derive(Clone, Copy, Debug)]
struct Span {
    offset: u64,
    size: u64,
}

pub struct Archive {
    file: File,
    files: HashMap<String, Span>,
    links: HashMap<String, String>,
}

/// What an archive says about its image.
#[derive(Clone, Debug)]
pub struct Manifest {
    /// The manifest digest (OCI) or the config digest (docker save).
    pub digest: String,
    /// Bottom layer first: where its blob is, and its diff id.
    pub layers: Vec<LayerBlob>,
    pub config: ImageConfig,
}

#[derive(Clone, Debug)]
pub struct LayerBlob {
    /// The archive path of the blob.
    pub path: String,
    /// `sha256:…` of the blob as stored, when the format states it.
    pub blob_digest: Option<String>,
    /// `sha256:…` of the uncompressed tar.
    pub diff_id: String,
}

/// The parts of an image's config a sandbox uses.
#[derive(Clone, Debug, Default, serde::Serialize, Deserialize, PartialEq)]
pub struct ImageConfig {
    #[serde(default)]
    pub env: Vec<String>,
    #[serde(default)]
    pub working_dir: String,
    #[serde(default)]
    pub user: String,
}

/// Most bytes a manifest, index or config may have.
const MAX_JSON: u64 = 8 << 20;

fn clean(name: &[u8]) -> Option<String> {
    let s = std::str::from_utf8(name).ok()?;
    let mut parts = Vec::new();
    for c in s.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            c => parts.push(c),
        }
    }
    Some(parts.join("/"))
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// `sha256:<64 hex>` → the hex; anything else is refused.
pub fn digest_hex(d: &str) -> anyhow::Result<&str> {
    let hex = d
        .strip_prefix("sha256:")
        .ok_or_else(|| anyhow::anyhow!("unsupported digest {d:?} (only sha256)"))?;
    anyhow::ensure!(
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()),
        "malformed digest {d:?}"
    );
    Ok(hex)
}

/// Reads a span of the archive file.
pub struct SpanReader<'a> {
    file: &'a File,
    pos: u64,
    end: u64,
}

impl Read for SpanReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = (self.end - self.pos).min(buf.len() as u64) as usize;
        if left == 0 {
            return Ok(0);
        }
        let n = self.file.read_at(&mut buf[..left], self.pos)?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        self.pos += n as u64;
        Ok(n)
    }
}

impl Archive {
    /// Indexes an uncompressed tar file.
    pub fn index(file: File) -> anyhow::Result<Archive> {
        let mut files = HashMap::new();
        let mut links = HashMap::new();
        let mut tar = tar::Archive::new(&file);
        for e in tar.entries()? {
            let e = e?;
            let Some(name) = clean(&e.path_bytes()) else {
                continue;
            };
            match e.header().entry_type() {
                tar::EntryType::Regular | tar::EntryType::Continuous => {
                    files.insert(
                        name,
                        Span {
                            offset: e.raw_file_position(),
                            size: e.size(),
                        },
                    );
                }
                tar::EntryType::Symlink | tar::EntryType::Link => {
                    if let Some(t) = e.link_name_bytes() {
                        let dir = name.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
                        let target = if e.header().entry_type() == tar::EntryType::Link
                            || t.starts_with(b"/")
                        {
                            t.to_vec()
                        } else {
                            [dir.as_bytes(), b"/", &t].concat()
                        };
                        if let Some(t) = clean(&target) {
                            links.insert(name, t);
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(Archive { file, files, links })
    }

    fn span(&self, path: &str) -> Option<Span> {
        let mut p = clean(path.as_bytes())?;
        for _ in 0..8 {
            if let Some(s) = self.files.get(&p) {
                return Some(*s);
            }
            p = self.links.get(&p)?.clone();
        }
        None
    }

    pub fn has(&self, path: &str) -> bool {
        self.span(path).is_some()
    }

    pub fn reader(&self, path: &str) -> anyhow::Result<SpanReader<'_>> {
        let s = self
            .span(path)
            .ok_or_else(|| anyhow::anyhow!("the archive has no {path:?}"))?;
        Ok(SpanReader {
            file: &self.file,
            pos: s.offset,
            end: s.offset + s.size,
        })
    }

    pub fn size(&self, path: &str) -> Option<u64> {
        self.span(path).map(|s| s.size)
    }

    fn json<T: serde::de::DeserializeOwned>(&self, path: &str) -> anyhow::Result<(T, Vec<u8>)> {
        let size = self.size(path).unwrap_or(0);
        anyhow::ensure!(size <= MAX_JSON, "{path} is too large ({size} bytes)");
        let mut buf = Vec::with_capacity(size as usize);
        self.reader(path)?.read_to_end(&mut buf)?;
        let v = serde_json::from_slice(&buf).map_err(|e| anyhow::anyhow!("{path}: {e}"))?;
        Ok((v, buf))
    }

    /// A blob of an OCI layout, checked against its digest.
    fn blob<T: serde::de::DeserializeOwned>(&self, digest: &str) -> anyhow::Result<T> {
        let hex = digest_hex(digest)?;
        let (v, raw) = self.json(&format!("blobs/sha256/{hex}"))?;
        anyhow::ensure!(
            sha256_hex(&raw) == hex,
            "blob {digest} does not match its digest"
        );
        Ok(v)
    }

    /// What image the archive holds, in either format.
    pub fn manifest(&self) -> anyhow::Result<Manifest> {
        if self.has("index.json") {
            self.oci()
        } else if self.has("manifest.json") {
            self.docker()
        } else {
            anyhow::bail!(
                "not an image archive: it has neither index.json (OCI layout) nor manifest.json (docker save)"
            )
        }
    }

    fn oci(&self) -> anyhow::Result<Manifest> {
        let (index, _): (OciIndex, _) = self.json("index.json")?;
        let mut descs = index.manifests;
        // Descend through nested indexes (multi-platform images) to one
        // manifest for this host's platform.
        for _ in 0..4 {
            let d = pick(&descs)?;
            if d.media_type.ends_with("image.index.v1+json")
                || d.media_type.ends_with("manifest.list.v2+json")
            {
                let inner: OciIndex = self.blob(&d.digest)?;
                descs = inner.manifests;
                continue;
            }
            let m: OciManifest = self.blob(&d.digest)?;
            let cfg: ConfigBlob = self.blob(&m.config.digest)?;
            let diff_ids = cfg.rootfs.diff_ids.clone();
            anyhow::ensure!(
                diff_ids.len() == m.layers.len(),
                "the manifest has {} layers and the config {} diff ids",
                m.layers.len(),
                diff_ids.len()
            );
            let layers = m
                .layers
                .iter()
                .zip(diff_ids)
                .map(|(l, diff_id)| {
                    Ok(LayerBlob {
                        path: format!("blobs/sha256/{}", digest_hex(&l.digest)?),
                        blob_digest: Some(l.digest.clone()),
                        diff_id,
                    })
                })
                .collect::<anyhow::Result<_>>()?;
            return Ok(Manifest {
                digest: d.digest.clone(),
                layers,
                config: cfg.config(),
            });
        }
        anyhow::bail!("image indexes nest too deeply")
    }

    fn docker(&self) -> anyhow::Result<Manifest> {
        let (entries, _): (Vec<DockerEntry>, _) = self.json("manifest.json")?;
        anyhow::ensure!(
            entries.len() == 1,
            "manifest.json holds {} images; import one at a time",
            entries.len()
        );
        let e = &entries[0];
        let (cfg, raw): (ConfigBlob, _) = self.json(&e.config)?;
        anyhow::ensure!(
            cfg.rootfs.diff_ids.len() == e.layers.len(),
            "manifest.json has {} layers and the config {} diff ids",
            e.layers.len(),
            cfg.rootfs.diff_ids.len()
        );
        // `docker save` names the config by its digest (the image id).
        let digest = format!("sha256:{}", sha256_hex(&raw));
        let layers = e
            .layers
            .iter()
            .zip(&cfg.rootfs.diff_ids)
            .map(|(p, d)| LayerBlob {
                path: p.clone(),
                blob_digest: p
                    .strip_prefix("blobs/sha256/")
                    .map(|h| format!("sha256:{h}")),
                diff_id: d.clone(),
            })
            .collect();
        Ok(Manifest {
            digest,
            layers,
            config: cfg.config(),
        })
    }
}

fn host_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    }
}

fn pick(descs: &[Descriptor]) -> anyhow::Result<&Descriptor> {
    anyhow::ensure!(!descs.is_empty(), "the image index lists no manifest");
    if descs.len() == 1 {
        return Ok(&descs[0]);
    }
    descs
        .iter()
        .find(|d| {
            d.platform
                .as_ref()
                .is_some_and(|p| p.os == "linux" && p.architecture == host_arch())
        })
        .ok_or_else(|| anyhow::anyhow!("no manifest for linux/{} in the index", host_arch()))
}

#[derive(Deserialize)]
struct OciIndex {
    #[serde(default)]
    manifests: Vec<Descriptor>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Descriptor {
    #[serde(default)]
    media_type: String,
    digest: String,
    #[serde(default)]
    platform: Option<Platform>,
}

#[derive(Deserialize)]
struct Platform {
    #[serde(default)]
    architecture: String,
    #[serde(default)]
    os: String,
}

#[derive(Deserialize)]
struct OciManifest {
    config: Descriptor,
    #[serde(default)]
    layers: Vec<Descriptor>,
}

#[derive(Deserialize)]
struct DockerEntry {
    #[serde(rename = "Config")]
    config: String,
    #[serde(rename = "Layers", default)]
    layers: Vec<String>,
}

#[derive(Deserialize)]
struct ConfigBlob {
    #[serde(default)]
    config: Option<RunConfig>,
    rootfs: RootFs,
}

#[derive(Deserialize, Default)]
struct RunConfig {
    #[serde(rename = "Env", default)]
    env: Option<Vec<String>>,
    #[serde(rename = "WorkingDir", default)]
    working_dir: Option<String>,
    #[serde(rename = "User", default)]
    user: Option<String>,
}

#[derive(Deserialize)]
struct RootFs {
    #[serde(default)]
    diff_ids: Vec<String>,
}

impl ConfigBlob {
    fn config(&self) -> ImageConfig {
        let c = self.config.as_ref();
        ImageConfig {
            env: c.and_then(|c| c.env.clone()).unwrap_or_default(),
            working_dir: c.and_then(|c| c.working_dir.clone()).unwrap_or_default(),
            user: c.and_then(|c| c.user.clone()).unwrap_or_default(),
        }
    }
}

/// Counts and hashes what passes through.
pub struct Hashing<R> {
    inner: R,
    hasher: Sha256,
    pub bytes: u64,
}

impl<R: Read> Hashing<R> {
    pub fn new(inner: R) -> Self {
        Hashing {
            inner,
            hasher: Sha256::new(),
            bytes: 0,
        }
    }
    /// Reads to the end (a tar's trailing padding too) and gives the hex
    /// digest of everything read.
    pub fn finish(mut self) -> std::io::Result<(String, u64)> {
        std::io::copy(&mut self, &mut std::io::sink())?;
        Ok((hex::encode(self.hasher.finalize()), self.bytes))
    }
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }
}

/// A layer blob as the uncompressed tar it holds: gzip and zstd are
/// recognised by their magic bytes, anything else is read as a plain tar.
pub fn decompress<'a, R: Read + 'a>(mut r: R) -> std::io::Result<Box<dyn Read + 'a>> {
    let mut magic = [0u8; 4];
    let mut n = 0;
    while n < 4 {
        let k = r.read(&mut magic[n..])?;
        if k == 0 {
            break;
        }
        n += k;
    }
    let head = std::io::Cursor::new(magic[..n].to_vec()).chain(r);
    Ok(if n >= 2 && magic[..2] == [0x1f, 0x8b] {
        Box::new(flate2::read::MultiGzDecoder::new(head))
    } else if n == 4 && magic == [0x28, 0xb5, 0x2f, 0xfd] {
        Box::new(
            ruzstd::decoding::StreamingDecoder::new(head)
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))?,
        )
    } else {
        Box::new(head)
    })
}
