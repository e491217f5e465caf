//! SecretService.

use super::principal;
use crate::api::convert::{ms_of, ts};
use crate::app::App;
use crate::audit::with_resource;
use crate::db::entity::secret;
use crate::domain::secrets::{self, Delivery};
use crate::domain::tenants::TenantScope;
use crate::domain::{page, paged};
use crate::error::Error;
use std::sync::Arc;
use talon_proto::v1 as pb;
use talon_proto::v1::secret_service_server::SecretService;
use tonic::{Request, Response, Status};

pub struct SecretApi(pub Arc<App>);

fn to_pb(s: &secret::Model) -> pb::Secret {
    pb::Secret {
        name: s.name.clone(),
        delivery: match Delivery::parse(&s.delivery) {
            Delivery::Env => pb::SecretDelivery::Env,
            Delivery::File => pb::SecretDelivery::File,
        } as i32,
        create_time: Some(ts(s.created_at)),
        update_time: Some(ts(s.updated_at)),
        expire_time: s.expires_at.map(ts),
    }
}

#[tonic::async_trait]
impl SecretService for SecretApi {
    async fn put_secret(
        &self,
        req: Request<pb::PutSecretRequest>,
    ) -> Result<Response<pb::PutSecretResponse>, Status> {
        let p = principal(&req)?;
        let r = req.into_inner();
        let delivery = match pb::SecretDelivery::try_from(r.delivery)
            .map_err(|_| Error::InvalidArgument("unknown delivery".into()))?
        {
            pb::SecretDelivery::Unspecified | pb::SecretDelivery::Env => Delivery::Env,
            pb::SecretDelivery::File => Delivery::File,
        };
        let row = secrets::put(
            &self.0,
            &TenantScope::own(&p),
            &r.name,
            &r.value,
            delivery,
            r.expire_time.as_ref().map(ms_of),
        )
        .await?;
        let id = row.id.clone();
        Ok(with_resource(
            Response::new(pb::PutSecretResponse {
                secret: Some(to_pb(&row)),
            }),
            id,
        ))
    }

    async fn list_secrets(
        &self,
        req: Request<pb::ListSecretsRequest>,
    ) -> Result<Response<pb::ListSecretsResponse>, Status> {
        let p = principal(&req)?;
        let r = req.into_inner();
        let (offset, limit) = page(&r.page_token, r.page_size)?;
        let (rows, next) = paged(
            secrets::list(&self.0, &TenantScope::own(&p), offset, limit + 1).await?,
            offset,
            limit,
        );
        Ok(Response::new(pb::ListSecretsResponse {
            secrets: rows.iter().map(to_pb).collect(),
            next_page_token: next,
        }))
    }

    async fn delete_secret(
        &self,
        req: Request<pb::DeleteSecretRequest>,
    ) -> Result<Response<pb::DeleteSecretResponse>, Status> {
        let p = principal(&req)?;
        let name = req.into_inner().name;
        secrets::delete(&self.0, &TenantScope::own(&p), &name).await?;
        Ok(with_resource(
            Response::new(pb::DeleteSecretResponse {}),
            name,
        ))
    }
}
