//! ImageService: the catalogue, imports and deletes (platform admins; the
//! access table says who may call what).

use super::convert::ts;
use crate::app::App;
use crate::audit::with_resource;
use crate::domain::images::{self, ImageView};
use crate::domain::page;
use crate::error::Error;
use futures::StreamExt;
use std::pin::Pin;
use std::sync::Arc;
use talon_proto::v1 as pb;
use talon_proto::v1::image_service_server::ImageService;
use tonic::{Request, Response, Status, Streaming};

pub struct ImageApi(pub Arc<App>);

fn to_pb(i: ImageView) -> pb::Image {
    pb::Image {
        source: if i.builtin {
            pb::ImageSource::Builtin
        } else {
            pb::ImageSource::OciArchive
        } as i32,
        create_time: (!i.builtin).then(|| ts(i.created_at)),
        name: i.name,
        digest: i.digest,
        size_bytes: i.size_bytes,
    }
}

type PrewarmStream =
    Pin<Box<dyn tokio_stream::Stream<Item = Result<pb::PrewarmImageResponse, Status>> + Send>>;

#[tonic::async_trait]
impl ImageService for ImageApi {
    async fn list_images(
        &self,
        req: Request<pb::ListImagesRequest>,
    ) -> Result<Response<pb::ListImagesResponse>, Status> {
        let r = req.into_inner();
        let (offset, limit) = page(&r.page_token, r.page_size)?;
        let (rows, next) = images::list(&self.0, offset, limit).await?;
        Ok(Response::new(pb::ListImagesResponse {
            images: rows.into_iter().map(to_pb).collect(),
            next_page_token: next,
        }))
    }

    async fn get_image(
        &self,
        req: Request<pb::GetImageRequest>,
    ) -> Result<Response<pb::GetImageResponse>, Status> {
        let i = images::get(&self.0, &req.into_inner().name).await?;
        Ok(Response::new(pb::GetImageResponse {
            image: Some(to_pb(i)),
        }))
    }

    async fn import_image(
        &self,
        req: Request<Streaming<pb::ImportImageRequest>>,
    ) -> Result<Response<pb::ImportImageResponse>, Status> {
        use pb::import_image_request::Message;
        let mut s = req.into_inner();
        let Some(Message::Header(h)) = s.message().await?.and_then(|m| m.message) else {
            return Err(
                Error::InvalidArgument("the first message must be the header".into()).into(),
            );
        };
        let data = s.map(|m| match m {
            Ok(pb::ImportImageRequest {
                message: Some(Message::Data(d)),
            }) => Ok(d),
            Ok(_) => Err(Error::InvalidArgument(
                "only data may follow the header".into(),
            )),
            Err(st) => Err(Error::Aborted(format!("upload: {}", st.message()))),
        });
        let i = images::import(&self.0, &h.name, &h.source_path, data).await?;
        let name = i.name.clone();
        Ok(with_resource(
            Response::new(pb::ImportImageResponse {
                image: Some(to_pb(i)),
            }),
            name,
        ))
    }

    type PrewarmImageStream = PrewarmStream;

    async fn prewarm_image(
        &self,
        req: Request<pb::PrewarmImageRequest>,
    ) -> Result<Response<PrewarmStream>, Status> {
        let r = req.into_inner();
        let rx = images::prewarm(&self.0, &r.name, r.pool_size).await?;
        let out = tokio_stream::wrappers::ReceiverStream::new(rx).map(|p| {
            Ok(pb::PrewarmImageResponse {
                worker_id: p.worker_id,
                phase: p.phase.into(),
                bytes_done: 0,
                bytes_total: 0,
                pool_ready: p.pool_ready,
                message: p.message,
            })
        });
        Ok(with_resource(
            Response::new(Box::pin(out) as PrewarmStream),
            r.name,
        ))
    }

    async fn delete_image(
        &self,
        req: Request<pb::DeleteImageRequest>,
    ) -> Result<Response<pb::DeleteImageResponse>, Status> {
        let name = req.into_inner().name;
        images::delete(&self.0, &name).await?;
        Ok(with_resource(
            Response::new(pb::DeleteImageResponse {}),
            name,
        ))
    }
}
