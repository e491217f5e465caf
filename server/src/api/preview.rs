//! PreviewService: signed preview links (domain::preview) and the ports a
//! sandbox listens on (asked of its agent, like the other agent calls).

use super::agent_proxy::AgentProxy;
use super::principal;
use crate::audit::with_resource;
use crate::domain::preview;
use talon_proto::v1 as pb;
use tonic::{Request, Response, Status};

#[tonic::async_trait]
impl pb::preview_service_server::PreviewService for AgentProxy {
    async fn create_preview_token(
        &self,
        req: Request<pb::CreatePreviewTokenRequest>,
    ) -> Result<Response<pb::CreatePreviewTokenResponse>, Status> {
        let p = principal(&req)?;
        let r = req.into_inner();
        let ttl = crate::api::convert::ttl_secs(r.ttl)?;
        let link = preview::create_token(&self.0, &p, &r.sandbox_id, r.port, ttl).await?;
        Ok(with_resource(
            Response::new(pb::CreatePreviewTokenResponse {
                token: link.token,
                url: link.url,
                expire_time: Some(prost_types::Timestamp {
                    seconds: link.expires_at_secs as i64,
                    nanos: 0,
                }),
            }),
            r.sandbox_id,
        ))
    }

    async fn list_ports(
        &self,
        req: Request<pb::ListPortsRequest>,
    ) -> Result<Response<pb::ListPortsResponse>, Status> {
        self.forward_list_ports(req).await
    }
}
