//! BrowserService: forwarded to the sandbox's agent like the other agent
//! calls; the URLs through the gateway are filled in here from what the
//! agent reports (domain::browser).

use super::agent_proxy::AgentProxy;
use super::convert::ttl_secs;
use super::principal;
use crate::audit::with_resource;
use crate::domain::browser::with_urls;
use talon_proto::v1 as pb;
use tonic::{Request, Response, Status};

#[tonic::async_trait]
impl pb::browser_service_server::BrowserService for AgentProxy {
    async fn start_browser(
        &self,
        req: Request<pb::StartBrowserRequest>,
    ) -> Result<Response<pb::StartBrowserResponse>, Status> {
        let p = principal(&req)?;
        let ttl = ttl_secs(req.get_ref().url_ttl)?;
        let mut route = self
            .route(&p, &req.get_ref().sandbox_id, "start_browser")
            .await?;
        let resp = route
            .client
            .start_browser(route.request(req.into_inner(), self.workers()))
            .await?
            .into_inner();
        let b = resp.browser.unwrap_or_default();
        if b.state == pb::BrowserState::Running as i32
            && crate::domain::browser::begin_watch(&self.0, &route.sandbox_id, b.pid)
        {
            // Held until the browser ends: a crash becomes a sandbox event.
            let (app, id, pid) = (self.0.clone(), route.sandbox_id.clone(), b.pid);
            let mut client = route.client.clone();
            let wait = route.request(
                pb::GetBrowserRequest {
                    sandbox_id: id.clone(),
                    url_ttl: None,
                },
                self.workers(),
            );
            tokio::spawn(async move {
                let ended = client
                    .wait_browser(wait)
                    .await
                    .ok()
                    .and_then(|r| r.into_inner().browser);
                crate::domain::browser::end_watch(&app, &id, pid, ended).await;
            });
        }
        let b = with_urls(&self.0, &p, &route.sandbox_id, &route.tenant_id, ttl, b)?;
        Ok(with_resource(
            Response::new(pb::StartBrowserResponse { browser: Some(b) }),
            route.sandbox_id,
        ))
    }

    async fn get_browser(
        &self,
        req: Request<pb::GetBrowserRequest>,
    ) -> Result<Response<pb::GetBrowserResponse>, Status> {
        let p = principal(&req)?;
        let ttl = ttl_secs(req.get_ref().url_ttl)?;
        let mut route = self
            .route(&p, &req.get_ref().sandbox_id, "get_browser")
            .await?;
        let resp = route
            .client
            .get_browser(route.request(req.into_inner(), self.workers()))
            .await?
            .into_inner();
        let b = resp.browser.unwrap_or_default();
        let b = with_urls(&self.0, &p, &route.sandbox_id, &route.tenant_id, ttl, b)?;
        Ok(Response::new(pb::GetBrowserResponse { browser: Some(b) }))
    }

    async fn stop_browser(
        &self,
        req: Request<pb::StopBrowserRequest>,
    ) -> Result<Response<pb::StopBrowserResponse>, Status> {
        let p = principal(&req)?;
        let mut route = self
            .route(&p, &req.get_ref().sandbox_id, "stop_browser")
            .await?;
        let resp = route
            .client
            .stop_browser(route.request(req.into_inner(), self.workers()))
            .await?
            .into_inner();
        let b = resp.browser.unwrap_or_default();
        let b = with_urls(&self.0, &p, &route.sandbox_id, &route.tenant_id, None, b)?;
        Ok(with_resource(
            Response::new(pb::StopBrowserResponse { browser: Some(b) }),
            route.sandbox_id,
        ))
    }

    async fn take_screenshot(
        &self,
        req: Request<pb::TakeScreenshotRequest>,
    ) -> Result<Response<pb::TakeScreenshotResponse>, Status> {
        let p = principal(&req)?;
        let mut route = self
            .route(&p, &req.get_ref().sandbox_id, "take_screenshot")
            .await?;
        let resp = route
            .client
            .take_screenshot(route.request(req.into_inner(), self.workers()))
            .await?;
        Ok(Response::new(resp.into_inner()))
    }
}
