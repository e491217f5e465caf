//! WorkerImageService, served on the data plane for the control plane
//! only: it spools an uploaded archive (or takes a path on this host),
//! and hands it to the image store off the async runtime.

use crate::host::SandboxHost;
use crate::image::{ImageRef, ImportError};
use std::io::Write;
use std::sync::Arc;
use talon_proto::talon::worker::v1 as wpb;
use talon_proto::talon::worker::v1::worker_image_service_server::WorkerImageService;
use talon_proto::v1 as pb;
use tonic::{Request, Response, Status, Streaming};

pub struct ImageApi(pub Arc<SandboxHost>);

pub fn image_pb(r: &ImageRef) -> pb::Image {
    pb::Image {
        name: r.name.clone(),
        source: pb::ImageSource::OciArchive as i32,
        digest: r.digest.clone(),
        size_bytes: r.size_bytes as i64,
        create_time: Some(prost_types::Timestamp {
            seconds: r.created_ms / 1000,
            nanos: ((r.created_ms % 1000) * 1_000_000) as i32,
        }),
    }
}

fn status(e: ImportError) -> Status {
    match e {
        ImportError::Invalid(m) => Status::invalid_argument(m),
        ImportError::TooLarge(m) => Status::resource_exhausted(m),
        ImportError::Io(e) => Status::internal(format!("image store: {e}")),
    }
}

#[tonic::async_trait]
impl WorkerImageService for ImageApi {
    async fn import_image(
        &self,
        req: Request<Streaming<wpb::ImportImageRequest>>,
    ) -> Result<Response<wpb::ImportImageResponse>, Status> {
        use wpb::import_image_request::Message;
        let mut s = req.into_inner();
        let Some(Message::Header(h)) = s.message().await?.and_then(|m| m.message) else {
            return Err(Status::invalid_argument(
                "the first message must be the header",
            ));
        };
        if !crate::image::valid_name(&h.name) {
            return Err(Status::invalid_argument(format!(
                "invalid image name {:?}",
                h.name
            )));
        }
        let store = self.0.images().clone();
        let (path, _spool) = if h.source_path.is_empty() {
            // Spooled to an unlinked-on-drop file in the store's tmp dir.
            let spool = tempfile::NamedTempFile::new_in(store.tmp_dir())
                .map_err(|e| Status::internal(format!("spool: {e}")))?;
            let mut w = std::io::BufWriter::new(spool.as_file());
            let mut total = 0u64;
            while let Some(m) = s.message().await? {
                let Some(Message::Data(d)) = m.message else {
                    return Err(Status::invalid_argument("only data may follow the header"));
                };
                total += d.len() as u64;
                if total > store.max_bytes() {
                    return Err(Status::resource_exhausted(format!(
                        "the archive is larger than {} bytes",
                        store.max_bytes()
                    )));
                }
                w.write_all(&d)
                    .map_err(|e| Status::internal(format!("spool: {e}")))?;
            }
            w.flush()
                .map_err(|e| Status::internal(format!("spool: {e}")))?;
            drop(w);
            (spool.path().to_path_buf(), Some(spool))
        } else {
            let p = std::path::PathBuf::from(&h.source_path);
            if !p.is_absolute() {
                return Err(Status::invalid_argument("source_path must be absolute"));
            }
            (p, None)
        };
        let name = h.name.clone();
        let r = tokio::task::spawn_blocking(move || store.import(&name, &path))
            .await
            .map_err(|e| Status::internal(format!("import: {e}")))?
            .map_err(status)?;
        tracing::info!(image = %r.name, digest = %r.digest, bytes = r.size_bytes, "image imported");
        Ok(Response::new(wpb::ImportImageResponse {
            image: Some(image_pb(&r)),
        }))
    }

    async fn delete_image(
        &self,
        req: Request<wpb::DeleteImageRequest>,
    ) -> Result<Response<wpb::DeleteImageResponse>, Status> {
        let name = req.into_inner().name;
        let host = self.0.clone();
        let deleted = tokio::task::spawn_blocking(move || host.delete_image(&name))
            .await
            .map_err(|e| Status::internal(format!("delete: {e}")))?
            .map_err(|e| Status::internal(format!("image store: {e}")))?;
        Ok(Response::new(wpb::DeleteImageResponse { deleted }))
    }
}
