//! VolumeService.

use super::principal;
use crate::api::convert::ts;
use crate::app::App;
use crate::audit::with_resource;
use crate::db::entity::volume;
use crate::domain::tenants::TenantScope;
use crate::domain::{page, paged, volumes};
use crate::error::Error;
use std::sync::Arc;
use talon_proto::v1 as pb;
use talon_proto::v1::volume_service_server::VolumeService;
use tonic::{Request, Response, Status};

pub struct VolumeApi(pub Arc<App>);

fn to_pb(v: &volume::Model) -> pb::Volume {
    pb::Volume {
        volume_id: v.id.clone(),
        name: v.name.clone(),
        size_mib: v.size_mib,
        create_time: Some(ts(v.created_at)),
        sandbox_id: v.sandbox_id.clone(),
    }
}

/// A credential bound to one sandbox manages no volumes.
fn scope(p: &crate::auth::Principal) -> Result<TenantScope, Status> {
    if p.sandbox_bound().is_some() {
        return Err(Error::PermissionDenied(
            "a sandbox's access token does not manage volumes".into(),
        )
        .into());
    }
    Ok(TenantScope::own(p))
}

#[tonic::async_trait]
impl VolumeService for VolumeApi {
    async fn create_volume(
        &self,
        req: Request<pb::CreateVolumeRequest>,
    ) -> Result<Response<pb::CreateVolumeResponse>, Status> {
        let p = principal(&req)?;
        let v = req.into_inner().volume.unwrap_or_default();
        let row = volumes::create(&self.0, &scope(&p)?, &v.name, v.size_mib).await?;
        let id = row.id.clone();
        Ok(with_resource(
            Response::new(pb::CreateVolumeResponse {
                volume: Some(to_pb(&row)),
            }),
            id,
        ))
    }

    async fn get_volume(
        &self,
        req: Request<pb::GetVolumeRequest>,
    ) -> Result<Response<pb::GetVolumeResponse>, Status> {
        let p = principal(&req)?;
        let row = volumes::get(&self.0, &scope(&p)?, &req.into_inner().name).await?;
        Ok(Response::new(pb::GetVolumeResponse {
            volume: Some(to_pb(&row)),
        }))
    }

    async fn list_volumes(
        &self,
        req: Request<pb::ListVolumesRequest>,
    ) -> Result<Response<pb::ListVolumesResponse>, Status> {
        let p = principal(&req)?;
        let r = req.into_inner();
        let (offset, limit) = page(&r.page_token, r.page_size)?;
        let (rows, next) = paged(
            volumes::list(&self.0, &scope(&p)?, offset, limit + 1).await?,
            offset,
            limit,
        );
        Ok(Response::new(pb::ListVolumesResponse {
            volumes: rows.iter().map(to_pb).collect(),
            next_page_token: next,
        }))
    }

    async fn delete_volume(
        &self,
        req: Request<pb::DeleteVolumeRequest>,
    ) -> Result<Response<pb::DeleteVolumeResponse>, Status> {
        let p = principal(&req)?;
        let name = req.into_inner().name;
        volumes::delete(&self.0, &scope(&p)?, &name).await?;
        Ok(with_resource(
            Response::new(pb::DeleteVolumeResponse {}),
            name,
        ))
    }
}
