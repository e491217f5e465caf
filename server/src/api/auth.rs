//! AuthService.

use super::principal;
use crate::api::convert::{role_to_pb, ts};
use crate::app::App;
use crate::auth::Credential;
use crate::domain::sessions::{self, Tokens};
use std::sync::Arc;
use talon_proto::v1 as pb;
use talon_proto::v1::auth_service_server::AuthService;
use tonic::{Request, Response, Status};

pub struct AuthApi(pub Arc<App>);

fn pair(t: Tokens) -> pb::TokenPair {
    pb::TokenPair {
        access_token: t.access_token,
        access_token_expire_time: Some(prost_types::Timestamp {
            seconds: t.access_expires_s as i64,
            nanos: 0,
        }),
        refresh_token: t.refresh_token,
        refresh_token_expire_time: Some(ts(t.refresh_expires_ms)),
    }
}

#[tonic::async_trait]
impl AuthService for AuthApi {
    async fn login(
        &self,
        req: Request<pb::LoginRequest>,
    ) -> Result<Response<pb::LoginResponse>, Status> {
        let r = req.into_inner();
        let t = sessions::login(&self.0, &r.email, &r.password).await?;
        Ok(Response::new(pb::LoginResponse {
            tokens: Some(pair(t)),
        }))
    }

    async fn create_browser_session(
        &self,
        req: Request<pb::CreateBrowserSessionRequest>,
    ) -> Result<Response<pb::CreateBrowserSessionResponse>, Status> {
        let r = req.into_inner();
        let (session_token, csrf_token, exp) =
            sessions::browser_session(&self.0, &r.email, &r.password).await?;
        Ok(Response::new(pb::CreateBrowserSessionResponse {
            session_token,
            csrf_token,
            expires_at: Some(prost_types::Timestamp {
                seconds: exp as i64,
                nanos: 0,
            }),
        }))
    }

    /// Sessions are signed tokens with a lifetime (8 h): ending one is the
    /// gateway clearing its cookie; nothing is kept here to revoke.
    async fn delete_browser_session(
        &self,
        req: Request<pb::DeleteBrowserSessionRequest>,
    ) -> Result<Response<pb::DeleteBrowserSessionResponse>, Status> {
        let p = principal(&req)?;
        Ok(crate::audit::with_resource(
            Response::new(pb::DeleteBrowserSessionResponse {}),
            p.user_id,
        ))
    }

    async fn refresh(
        &self,
        req: Request<pb::RefreshRequest>,
    ) -> Result<Response<pb::RefreshResponse>, Status> {
        let t = sessions::refresh(&self.0, &req.into_inner().refresh_token).await?;
        Ok(Response::new(pb::RefreshResponse {
            tokens: Some(pair(t)),
        }))
    }

    async fn logout(
        &self,
        req: Request<pb::LogoutRequest>,
    ) -> Result<Response<pb::LogoutResponse>, Status> {
        let p = principal(&req)?;
        let r = req.into_inner();
        sessions::logout(&self.0, &p, &r.refresh_token, r.all_sessions).await?;
        Ok(crate::audit::with_resource(
            Response::new(pb::LogoutResponse {}),
            p.user_id,
        ))
    }

    async fn change_password(
        &self,
        req: Request<pb::ChangePasswordRequest>,
    ) -> Result<Response<pb::ChangePasswordResponse>, Status> {
        let p = principal(&req)?;
        let r = req.into_inner();
        sessions::change_password(&self.0, &p, &r.current_password, &r.new_password).await?;
        Ok(crate::audit::with_resource(
            Response::new(pb::ChangePasswordResponse {}),
            p.user_id,
        ))
    }

    async fn who_am_i(
        &self,
        req: Request<pb::WhoAmIRequest>,
    ) -> Result<Response<pb::WhoAmIResponse>, Status> {
        let p = principal(&req)?;
        let (kind, key) = match &p.credential {
            Credential::ApiKey { key_id } => (pb::CredentialKind::ApiKey, key_id.clone()),
            _ => (pb::CredentialKind::AccessToken, String::new()),
        };
        Ok(Response::new(pb::WhoAmIResponse {
            tenant_id: p.tenant_id,
            user_id: p.user_id,
            email: p.email,
            role: role_to_pb(p.role) as i32,
            credential_kind: kind as i32,
            api_key_id: key,
            platform_admin: p.platform_admin,
        }))
    }
}
