//! The browser's URLs: the agent reports the browser's state and its own
//! DevTools addresses on the sandbox's loopback; callers get addresses
//! through the gateway's CDP proxy instead, each carrying a DevTools token
//! (a preview token of its own audience) bound to this sandbox and the
//! DevTools port (so the gateway needs no other credential, and Playwright
//! or Puppeteer can be given one URL):
//!
//! - `cdp_url`: `{public}/cdp/{sandbox}/{token}`, whose `/json/version`
//!   the gateway rewrites to name WebSockets under the same prefix;
//! - `websocket_debugger_url`: the browser target under that prefix;
//! - `live_view_url`: `{public}/cdp/{sandbox}/{token}/live`, a page
//!   that shows the screen from CDP screencast frames.
//!
//! Only a caller who may drive the browser (developer role) is given them:
//! a viewer sees the state alone.

use crate::app::App;
use crate::auth::Principal;
use crate::auth::Role;
use crate::auth::preview::{DEFAULT_TTL_SECS, MAX_TTL_SECS};
use crate::error::{Error, Result};
use talon_proto::v1 as pb;

/// Fills `b`'s URLs for `sandbox_id` (the row's own id) of `tenant_id`.
pub fn with_urls(
    app: &App,
    p: &Principal,
    sandbox_id: &str,
    tenant_id: &str,
    ttl_secs: Option<u64>,
    mut b: pb::Browser,
) -> Result<pb::Browser> {
    b.sandbox_id = sandbox_id.to_string();
    let running = b.state == pb::BrowserState::Running as i32;
    let raw_ws = std::mem::take(&mut b.websocket_debugger_url);
    if !running || !p.role.at_least(Role::Developer) {
        return Ok(b);
    }
    let ttl = super::preview::ttl_within(ttl_secs, DEFAULT_TTL_SECS, MAX_TTL_SECS)?;
    // The gateway's CDP proxy opens the browser's own port, whatever the
    // agent said; a DevTools token opens that port alone.
    if u32::try_from(b.cdp_port).ok() != Some(crate::auth::preview::CDP_PORT) {
        return Err(Error::Internal(format!(
            "the agent reported port {}",
            b.cdp_port
        )));
    }
    let (token, exp) = app.preview().issue_cdp(sandbox_id, tenant_id, ttl)?;
    let base = format!(
        "{}/cdp/{sandbox_id}/{token}",
        app.config().public_url.trim_end_matches('/')
    );
    // ws://127.0.0.1:9222/devtools/browser/<id> -> the same path here.
    let path = raw_ws
        .split_once("://")
        .and_then(|(_, rest)| rest.find('/').map(|i| &rest[i..]))
        .unwrap_or("");
    let ws_base = base
        .replacen("https://", "wss://", 1)
        .replacen("http://", "ws://", 1);
    b.websocket_debugger_url = if path.is_empty() {
        String::new()
    } else {
        format!("{ws_base}{path}")
    };
    b.live_view_url = format!("{base}/live");
    b.cdp_url = base;
    b.expire_time = Some(prost_types::Timestamp {
        seconds: exp as i64,
        nanos: 0,
    });
    Ok(b)
}

/// Claims the crash watch of the browser `pid` of `sandbox_id`: false
/// when one is already watching it (every StartBrowser of a running
/// browser would otherwise add a watcher and an event).
pub fn begin_watch(app: &App, sandbox_id: &str, pid: i32) -> bool {
    app.browser_watches()
        .lock()
        .expect("browser watches")
        .insert(format!("{sandbox_id}/{pid}"))
}

/// Ends a watch; `ended` is the browser as it ended, when the agent said:
/// a crash is published as a sandbox event (WatchSandboxEvents) and
/// counted.
pub async fn end_watch(app: &App, sandbox_id: &str, pid: i32, ended: Option<pb::Browser>) {
    app.browser_watches()
        .lock()
        .expect("browser watches")
        .remove(&format!("{sandbox_id}/{pid}"));
    let Some(b) = ended.filter(|b| b.state == pb::BrowserState::Crashed as i32) else {
        return;
    };
    app.metrics().browser_crashes.inc();
    if let Ok(Some(row)) = crate::domain::sandboxes::find(app, sandbox_id).await {
        app.emit(crate::app::SandboxEvent {
            sandbox: row,
            kind: crate::app::EventKind::BrowserCrashed,
            message: b.error,
        });
    }
}
