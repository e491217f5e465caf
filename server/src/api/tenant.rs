//! TenantService.

use super::principal;
use crate::api::convert::{
    api_key_to_pb, ms_of, quota_from_pb, role_from_pb, tenant_to_pb, user_to_pb,
};
use crate::app::App;
use crate::audit::with_resource;
use crate::auth::Role;
use crate::domain::tenants::TenantScope;
use crate::domain::{page, paged, tenants};
use crate::error::Error;
use std::sync::Arc;
use talon_proto::v1 as pb;
use talon_proto::v1::tenant_service_server::TenantService;
use tonic::{Request, Response, Status};

pub struct TenantApi(pub Arc<App>);

#[tonic::async_trait]
impl TenantService for TenantApi {
    async fn create_tenant(
        &self,
        req: Request<pb::CreateTenantRequest>,
    ) -> Result<Response<pb::CreateTenantResponse>, Status> {
        let r = req.into_inner();
        let quota = r.quota.as_ref().map(quota_from_pb);
        let (t, owner) = tenants::create_tenant(
            &self.0,
            &r.name,
            quota,
            &r.owner_email,
            &r.owner_password,
            false,
        )
        .await?;
        let (t, u) = tenants::get_tenant(&self.0, &TenantScope::of_stored(&t.id)).await?;
        let id = t.id.clone();
        Ok(with_resource(
            Response::new(pb::CreateTenantResponse {
                tenant: Some(tenant_to_pb(&t, Some(&u))),
                owner: Some(user_to_pb(&owner)),
            }),
            id,
        ))
    }

    async fn list_tenants(
        &self,
        req: Request<pb::ListTenantsRequest>,
    ) -> Result<Response<pb::ListTenantsResponse>, Status> {
        let r = req.into_inner();
        let (offset, limit) = page(&r.page_token, r.page_size)?;
        let rows = tenants::list_tenants(&self.0, offset, limit + 1).await?;
        let (rows, next) = paged(rows, offset, limit);
        Ok(Response::new(pb::ListTenantsResponse {
            tenants: rows.iter().map(|t| tenant_to_pb(t, None)).collect(),
            next_page_token: next,
        }))
    }

    async fn get_tenant(
        &self,
        req: Request<pb::GetTenantRequest>,
    ) -> Result<Response<pb::GetTenantResponse>, Status> {
        let p = principal(&req)?;
        let tid = tenants::scope(&self.0, &p, &req.get_ref().tenant_id).await?;
        let (t, u) = tenants::get_tenant(&self.0, &tid).await?;
        Ok(Response::new(pb::GetTenantResponse {
            tenant: Some(tenant_to_pb(&t, Some(&u))),
        }))
    }

    async fn update_tenant_quota(
        &self,
        req: Request<pb::UpdateTenantQuotaRequest>,
    ) -> Result<Response<pb::UpdateTenantQuotaResponse>, Status> {
        let p = principal(&req)?;
        let r = req.into_inner();
        let tid = tenants::scope(&self.0, &p, &r.tenant_id).await?;
        let q = r
            .quota
            .as_ref()
            .ok_or_else(|| Error::InvalidArgument("quota is required".into()))?;
        let (t, u) = tenants::update_quota(&self.0, &tid, quota_from_pb(q)).await?;
        Ok(with_resource(
            Response::new(pb::UpdateTenantQuotaResponse {
                tenant: Some(tenant_to_pb(&t, Some(&u))),
            }),
            tid.id().to_string(),
        ))
    }

    async fn create_user(
        &self,
        req: Request<pb::CreateUserRequest>,
    ) -> Result<Response<pb::CreateUserResponse>, Status> {
        let p = principal(&req)?;
        let r = req.into_inner();
        let tid = tenants::scope(&self.0, &p, &r.tenant_id).await?;
        let role = role_from_pb(r.role)?.unwrap_or(Role::Viewer);
        let u = tenants::create_user(&self.0, &tid, &r.email, &r.password, role).await?;
        let id = u.id.clone();
        Ok(with_resource(
            Response::new(pb::CreateUserResponse {
                user: Some(user_to_pb(&u)),
            }),
            id,
        ))
    }

    async fn list_users(
        &self,
        req: Request<pb::ListUsersRequest>,
    ) -> Result<Response<pb::ListUsersResponse>, Status> {
        let p = principal(&req)?;
        let r = req.into_inner();
        let tid = tenants::scope(&self.0, &p, &r.tenant_id).await?;
        let (offset, limit) = page(&r.page_token, r.page_size)?;
        let rows = tenants::list_users(&self.0, &tid, offset, limit + 1).await?;
        let (rows, next) = paged(rows, offset, limit);
        Ok(Response::new(pb::ListUsersResponse {
            users: rows.iter().map(user_to_pb).collect(),
            next_page_token: next,
        }))
    }

    async fn get_user(
        &self,
        req: Request<pb::GetUserRequest>,
    ) -> Result<Response<pb::GetUserResponse>, Status> {
        let p = principal(&req)?;
        let r = req.into_inner();
        let tid = tenants::scope(&self.0, &p, &r.tenant_id).await?;
        let u = tenants::get_user(&self.0, &tid, &r.user_id).await?;
        Ok(Response::new(pb::GetUserResponse {
            user: Some(user_to_pb(&u)),
        }))
    }

    async fn update_user(
        &self,
        req: Request<pb::UpdateUserRequest>,
    ) -> Result<Response<pb::UpdateUserResponse>, Status> {
        let p = principal(&req)?;
        let r = req.into_inner();
        let tid = tenants::scope(&self.0, &p, &r.tenant_id).await?;
        let change = tenants::UserChange {
            role: role_from_pb(r.role)?,
            disabled: r.disabled,
            password: Some(r.password).filter(|s| !s.is_empty()),
        };
        let u = tenants::update_user(&self.0, &tid, &r.user_id, change).await?;
        Ok(with_resource(
            Response::new(pb::UpdateUserResponse {
                user: Some(user_to_pb(&u)),
            }),
            r.user_id,
        ))
    }

    async fn delete_user(
        &self,
        req: Request<pb::DeleteUserRequest>,
    ) -> Result<Response<pb::DeleteUserResponse>, Status> {
        let p = principal(&req)?;
        let r = req.into_inner();
        let tid = tenants::scope(&self.0, &p, &r.tenant_id).await?;
        tenants::delete_user(&self.0, &tid, &r.user_id).await?;
        Ok(with_resource(
            Response::new(pb::DeleteUserResponse {}),
            r.user_id,
        ))
    }

    async fn create_api_key(
        &self,
        req: Request<pb::CreateApiKeyRequest>,
    ) -> Result<Response<pb::CreateApiKeyResponse>, Status> {
        let p = principal(&req)?;
        let r = req.into_inner();
        let tid = tenants::scope(&self.0, &p, &r.tenant_id).await?;
        let role = role_from_pb(r.role)?;
        let (k, secret) = tenants::create_api_key(
            &self.0,
            &p,
            &tid,
            &r.name,
            role,
            r.expire_time.as_ref().map(ms_of),
        )
        .await?;
        let id = k.id.clone();
        Ok(with_resource(
            Response::new(pb::CreateApiKeyResponse {
                api_key: Some(api_key_to_pb(&k)),
                secret,
            }),
            id,
        ))
    }

    async fn list_api_keys(
        &self,
        req: Request<pb::ListApiKeysRequest>,
    ) -> Result<Response<pb::ListApiKeysResponse>, Status> {
        let p = principal(&req)?;
        let r = req.into_inner();
        let tid = tenants::scope(&self.0, &p, &r.tenant_id).await?;
        let (offset, limit) = page(&r.page_token, r.page_size)?;
        let rows = tenants::list_api_keys(&self.0, &p, &tid, offset, limit + 1).await?;
        let (rows, next) = paged(rows, offset, limit);
        Ok(Response::new(pb::ListApiKeysResponse {
            api_keys: rows.iter().map(api_key_to_pb).collect(),
            next_page_token: next,
        }))
    }

    async fn delete_api_key(
        &self,
        req: Request<pb::DeleteApiKeyRequest>,
    ) -> Result<Response<pb::DeleteApiKeyResponse>, Status> {
        let p = principal(&req)?;
        let r = req.into_inner();
        let tid = tenants::scope(&self.0, &p, &r.tenant_id).await?;
        tenants::delete_api_key(&self.0, &p, &tid, &r.api_key_id).await?;
        Ok(with_resource(
            Response::new(pb::DeleteApiKeyResponse {}),
            r.api_key_id,
        ))
    }
}
