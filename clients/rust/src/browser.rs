//! The sandbox's browser: Chromium, headless, its profile in the
//! workspace. `cdp_url` of what `start` returns is what Playwright's
//! `connect_over_cdp` takes; `websocket_debugger_url` is the browser
//! target's WebSocket for any CDP client (chromiumoxide, Puppeteer).

use crate::{Result, Sandbox, Svc, duration, pb};
use std::time::Duration;

pub struct Browser<'a> {
    pub(crate) s: &'a Sandbox,
}

impl Browser<'_> {
    fn client(&self) -> pb::browser_service_client::BrowserServiceClient<Svc> {
        self.s.client().browsers()
    }

    /// Starts the browser (or returns the running one) once its DevTools
    /// answer. `window_size` is "W,H"; `url_ttl` is how long the URLs'
    /// token lasts (1 h when None).
    pub async fn start(
        &self,
        window_size: Option<&str>,
        url_ttl: Option<Duration>,
    ) -> Result<pb::Browser> {
        Ok(self
            .client()
            .start_browser(pb::StartBrowserRequest {
                sandbox_id: self.s.id().into(),
                window_size: window_size.unwrap_or_default().into(),
                url_ttl: url_ttl.map(duration),
            })
            .await?
            .into_inner()
            .browser
            .unwrap_or_default())
    }

    /// The browser's state, with fresh URLs when it runs.
    pub async fn get(&self) -> Result<pb::Browser> {
        Ok(self
            .client()
            .get_browser(pb::GetBrowserRequest {
                sandbox_id: self.s.id().into(),
                url_ttl: None,
            })
            .await?
            .into_inner()
            .browser
            .unwrap_or_default())
    }

    /// Stops it, letting it write its profile out first.
    pub async fn stop(&self) -> Result<pb::Browser> {
        Ok(self
            .client()
            .stop_browser(pb::StopBrowserRequest {
                sandbox_id: self.s.id().into(),
            })
            .await?
            .into_inner()
            .browser
            .unwrap_or_default())
    }

    /// A PNG of the active page (the whole page when `full_page`).
    pub async fn screenshot(&self, full_page: bool) -> Result<Vec<u8>> {
        Ok(self
            .client()
            .take_screenshot(pb::TakeScreenshotRequest {
                sandbox_id: self.s.id().into(),
                full_page,
            })
            .await?
            .into_inner()
            .png)
    }
}
