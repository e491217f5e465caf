//! CodeService: forwarded to the sandbox's agent, which runs the kernels.

use super::agent_proxy::{AgentProxy, Out, boxed};
use super::principal;
use crate::audit::with_resource;
use talon_proto::v1 as pb;
use tonic::{Request, Response, Status};

macro_rules! forward {
    ($self:ident, $req:ident, $method:ident) => {{
        let id = $req.get_ref().sandbox_id.clone();
        let mut route = $self
            .route(&principal(&$req)?, &id, stringify!($method))
            .await?;
        let resp = route
            .client
            .$method(route.request($req.into_inner(), $self.workers()))
            .await?;
        Ok(with_resource(Response::new(resp.into_inner()), id))
    }};
}

#[tonic::async_trait]
impl pb::code_service_server::CodeService for AgentProxy {
    type RunCodeStream = Out<pb::RunCodeResponse>;

    async fn create_code_context(
        &self,
        req: Request<pb::CreateCodeContextRequest>,
    ) -> Result<Response<pb::CreateCodeContextResponse>, Status> {
        forward!(self, req, create_code_context)
    }
    async fn list_code_contexts(
        &self,
        req: Request<pb::ListCodeContextsRequest>,
    ) -> Result<Response<pb::ListCodeContextsResponse>, Status> {
        forward!(self, req, list_code_contexts)
    }
    async fn delete_code_context(
        &self,
        req: Request<pb::DeleteCodeContextRequest>,
    ) -> Result<Response<pb::DeleteCodeContextResponse>, Status> {
        forward!(self, req, delete_code_context)
    }
    async fn restart_code_context(
        &self,
        req: Request<pb::RestartCodeContextRequest>,
    ) -> Result<Response<pb::RestartCodeContextResponse>, Status> {
        forward!(self, req, restart_code_context)
    }
    async fn interrupt_code_context(
        &self,
        req: Request<pb::InterruptCodeContextRequest>,
    ) -> Result<Response<pb::InterruptCodeContextResponse>, Status> {
        forward!(self, req, interrupt_code_context)
    }
    async fn run_code(
        &self,
        req: Request<pb::RunCodeRequest>,
    ) -> Result<Response<Self::RunCodeStream>, Status> {
        let id = req.get_ref().sandbox_id.clone();
        let mut route = self.route(&principal(&req)?, &id, "run_code").await?;
        let resp = route
            .client
            .run_code(route.request(req.into_inner(), self.workers()))
            .await?;
        Ok(with_resource(Response::new(boxed(resp.into_inner())), id))
    }
}
