//! The sandbox's browser (BrowserService): Chromium, headless, started as
//! a hidden process of the sandbox's default user, with its profile under
//! the workspace (so cookies and logins survive a stop and start of the
//! sandbox) and its DevTools endpoint on the sandbox's loopback only. The
//! server reaches that endpoint through the preview tunnel and hands out
//! URLs through the gateway; nothing here knows them.
//!
//! Chromium's own sandbox needs user namespaces or a setuid helper, which
//! the sandbox's seccomp policy and `no_new_privs` refuse, so it runs with
//! `--no-sandbox`: the sandbox around it is the isolation boundary
//! (docs/browser.md). `/dev/shm` is a 64 MiB tmpfs; Chromium is told to use
//! /tmp instead (`--disable-dev-shm-usage`), as in every container.

use crate::supervisor::{Proc, Supervisor};
use std::sync::Arc;
use std::time::Duration;
use talon_proto::v1 as pb;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Mutex;
use tonic::Status;

/// The DevTools port on the sandbox's loopback.
pub const CDP_PORT: u16 = talon_proto::BROWSER_CDP_PORT;
/// How long a start may take until DevTools answers.
pub const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a stop waits for SIGTERM before SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(5);
/// The profile, under the workspace.
pub const PROFILE_DIR: &str = ".talon/browser-profile";
const DEFAULT_WINDOW: &str = "1280,720";
/// Where Chromium is looked for: Debian's binary itself (its wrapper
/// script reads /etc/chromium.d), then the usual names on the PATH.
const CANDIDATES: &[&str] = &[
    "/usr/lib/chromium/chromium",
    "chromium",
    "chromium-browser",
    "google-chrome-stable",
    "google-chrome",
    "chrome",
    "headless_shell",
];
const PATH_DIRS: &[&str] = &[
    "/usr/local/sbin",
    "/usr/local/bin",
    "/usr/sbin",
    "/usr/bin",
    "/sbin",
    "/bin",
    "/opt/google/chrome",
];
/// The most a DevTools HTTP answer may be.
const MAX_JSON: usize = 4 << 20;

#[derive(Default)]
struct State {
    proc: Option<Arc<Proc>>,
    /// The browser-level WebSocket URL, as Chromium gives it.
    ws_url: String,
    window: String,
    /// Why the last browser ended, when it ended on its own.
    error: String,
    /// A stop is under way or done: the exit is not a crash.
    stopped: bool,
}

pub struct Browser {
    sup: Arc<Supervisor>,
    workspace: String,
    state: Mutex<State>,
}

impl Browser {
    pub fn new(sup: Arc<Supervisor>, workspace: String) -> Arc<Browser> {
        Arc::new(Browser {
            sup,
            workspace,
            state: Mutex::new(State::default()),
        })
    }

    /// Starts the browser, or returns the running one.
    pub async fn start(&self, req: &pb::StartBrowserRequest) -> Result<pb::Browser, Status> {
        let window = window_size(&req.window_size)?;
        let mut st = self.state.lock().await;
        if let Some(p) = &st.proc
            && p.running()
        {
            return Ok(describe(&st));
        }
        let exe = find_chromium().ok_or_else(|| {
            Status::failed_precondition(
                "no Chromium in this sandbox's image (looked for /usr/lib/chromium/chromium, \
                 chromium, chromium-browser, google-chrome, headless_shell); see docs/browser.md",
            )
        })?;
        let profile = format!("{}/{PROFILE_DIR}", self.workspace.trim_end_matches('/'));
        clear_stale_locks(&profile);
        let command = vec![
            exe,
            "--headless=new".into(),
            "--no-sandbox".into(),
            "--disable-dev-shm-usage".into(),
            "--disable-gpu".into(),
            "--no-first-run".into(),
            "--no-default-browser-check".into(),
            "--disable-background-networking".into(),
            "--log-level=3".into(),
            "--remote-debugging-address=127.0.0.1".into(),
            format!("--remote-debugging-port={CDP_PORT}"),
            format!("--user-data-dir={profile}"),
            format!("--window-size={window}"),
            "about:blank".into(),
        ];
        let proc = self.sup.spawn_as(
            &pb::StartProcessRequest {
                command,
                cwd: self.workspace.clone(),
                tag: "browser".into(),
                ..Default::default()
            },
            true,
        )?;
        *st = State {
            proc: Some(proc.clone()),
            window,
            ..State::default()
        };
        let deadline = tokio::time::Instant::now() + START_TIMEOUT;
        loop {
            if !proc.running() {
                st.error = ended(&proc);
                return Err(Status::failed_precondition(format!(
                    "the browser exited while starting: {}",
                    st.error
                )));
            }
            if let Ok(v) = get_json("/json/version").await
                && let Some(ws) = v["webSocketDebuggerUrl"].as_str()
            {
                st.ws_url = ws.to_string();
                return Ok(describe(&st));
            }
            if tokio::time::Instant::now() >= deadline {
                let _ = proc.signal(libc::SIGKILL);
                st.stopped = true;
                return Err(Status::deadline_exceeded(format!(
                    "the browser's DevTools did not answer within {} s",
                    START_TIMEOUT.as_secs()
                )));
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    pub async fn get(&self) -> pb::Browser {
        let mut st = self.state.lock().await;
        if let Some(p) = &st.proc
            && !p.running()
            && !st.stopped
            && st.error.is_empty()
        {
            st.error = ended(p);
        }
        describe(&st)
    }

    /// Waits until the running browser ends, then describes it (at once
    /// when none runs). A stop holds the state until it is done, so a
    /// browser it ends is seen stopped, never crashed.
    pub async fn wait(&self) -> pb::Browser {
        let proc = self.state.lock().await.proc.clone();
        if let Some(p) = proc
            && p.running()
        {
            let mut rx = p.subscribe();
            let _ = rx.wait_for(|s| s.exit.is_some()).await;
        }
        self.get().await
    }

    /// Stops the browser: `Browser.close` over DevTools (Chromium then
    /// writes its profile out: cookies live in its network process, which
    /// a signal to the whole group would kill first), SIGTERM to the main
    /// process if that does not end it, and SIGKILL to the group last.
    pub async fn stop(&self) -> pb::Browser {
        let mut st = self.state.lock().await;
        st.stopped = true;
        if let Some(p) = st.proc.clone()
            && p.running()
        {
            let mut rx = p.subscribe();
            let mut exited = async |d: Duration| {
                tokio::time::timeout(d, rx.wait_for(|s| s.exit.is_some()))
                    .await
                    .is_ok()
            };
            let closed = !st.ws_url.is_empty()
                && tokio::time::timeout(
                    Duration::from_secs(2),
                    call(&st.ws_url, &[("Browser.close", serde_json::json!({}))]),
                )
                .await
                .is_ok_and(|r| r.is_ok());
            if !(closed && exited(STOP_GRACE).await) {
                // SAFETY: kill(2) on our own child.
                unsafe { libc::kill(p.pid as i32, libc::SIGTERM) };
                if !exited(STOP_GRACE).await {
                    let _ = p.signal(libc::SIGKILL);
                    exited(STOP_GRACE).await;
                }
            }
            // Helpers it left behind go with its group.
            // SAFETY: kill(2) on our child's process group.
            unsafe { libc::kill(-(p.pid as i32), libc::SIGKILL) };
        }
        describe(&st)
    }

    /// A PNG of the first page target.
    pub async fn screenshot(&self, full_page: bool) -> Result<pb::TakeScreenshotResponse, Status> {
        {
            let st = self.state.lock().await;
            if !st.proc.as_ref().is_some_and(|p| p.running()) {
                return Err(Status::failed_precondition("the browser is not running"));
            }
        }
        let list = get_json("/json/list")
            .await
            .map_err(|e| Status::unavailable(format!("the browser's DevTools: {e}")))?;
        let page = list
            .as_array()
            .and_then(|a| a.iter().find(|t| t["type"] == "page"))
            .ok_or_else(|| Status::failed_precondition("the browser has no open page"))?;
        let ws = page["webSocketDebuggerUrl"]
            .as_str()
            .ok_or_else(|| Status::unavailable("the page has no DevTools URL"))?;
        let png = tokio::time::timeout(Duration::from_secs(30), capture(ws, full_page))
            .await
            .map_err(|_| Status::deadline_exceeded("the screenshot took over 30 s"))??;
        Ok(pb::TakeScreenshotResponse {
            png,
            url: page["url"].as_str().unwrap_or_default().to_string(),
            title: page["title"].as_str().unwrap_or_default().to_string(),
        })
    }
}

fn describe(st: &State) -> pb::Browser {
    let running = st.proc.as_ref().is_some_and(|p| p.running());
    let state = match &st.proc {
        Some(_) if running && st.ws_url.is_empty() => pb::BrowserState::Starting,
        Some(_) if running => pb::BrowserState::Running,
        Some(_) if !st.stopped => pb::BrowserState::Crashed,
        _ => pb::BrowserState::Stopped,
    };
    let p = st.proc.as_ref().filter(|_| running);
    pb::Browser {
        state: state as i32,
        websocket_debugger_url: if running {
            st.ws_url.clone()
        } else {
            String::new()
        },
        start_time: p.map(|p| crate::service::ts(p.start_ms)),
        pid: p.map_or(0, |p| p.pid as i32),
        cdp_port: i32::from(CDP_PORT),
        error: if state == pb::BrowserState::Crashed {
            st.error.clone()
        } else {
            String::new()
        },
        window_size: st.window.clone(),
        ..Default::default()
    }
}

/// "W,H", each 100 to 7680; the default when empty.
fn window_size(s: &str) -> Result<String, Status> {
    if s.is_empty() {
        return Ok(DEFAULT_WINDOW.into());
    }
    let ok = s.split_once(',').and_then(|(w, h)| {
        let (w, h): (u32, u32) = (w.trim().parse().ok()?, h.trim().parse().ok()?);
        ((100..=7680).contains(&w) && (100..=7680).contains(&h)).then(|| format!("{w},{h}"))
    });
    ok.ok_or_else(|| Status::invalid_argument("window_size is \"W,H\", each 100 to 7680"))
}

fn find_chromium() -> Option<String> {
    CANDIDATES.iter().find_map(|c| {
        let paths: Vec<String> = if c.starts_with('/') {
            vec![c.to_string()]
        } else {
            PATH_DIRS.iter().map(|d| format!("{d}/{c}")).collect()
        };
        paths.into_iter().find(|p| {
            std::fs::metadata(p).is_ok_and(|m| {
                m.is_file()
                    && std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o111 != 0
            })
        })
    })
}

/// Chromium's profile lock names the host and pid that held it; after a
/// restart of the sandbox another process may have that pid, and the
/// profile would be refused as in use. No browser runs when this is called.
/// The entries are links: removed, never followed.
fn clear_stale_locks(profile: &str) {
    for name in ["SingletonLock", "SingletonSocket", "SingletonCookie"] {
        let _ = std::fs::remove_file(format!("{profile}/{name}"));
    }
}

/// How a browser that ended on its own ended: its exit and the last lines
/// it wrote.
fn ended(p: &Proc) -> String {
    let exit = match p.progress().exit {
        Some(e) if e.signal != 0 => format!("killed by signal {}", e.signal),
        Some(e) => format!("exited with code {}", e.exit_code),
        None => "still running".into(),
    };
    let tail = p.tail_lines(5, |l| l.contains("dbus/")).join("\n");
    if tail.is_empty() {
        exit
    } else {
        format!("{exit}: {tail}")
    }
}

/// A DevTools HTTP GET on the loopback, as JSON. Chromium keeps the
/// connection open whatever the request says: the body is read by its
/// length.
async fn get_json(path: &str) -> anyhow::Result<serde_json::Value> {
    tokio::time::timeout(Duration::from_secs(5), async {
        let mut s = tokio::net::TcpStream::connect(("127.0.0.1", CDP_PORT)).await?;
        s.write_all(
            format!(
                "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{CDP_PORT}\r\nConnection: close\r\n\r\n"
            )
            .as_bytes(),
        )
        .await?;
        let mut buf = Vec::new();
        let mut chunk = [0u8; 16 << 10];
        loop {
            if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&buf[..at]).to_ascii_lowercase();
                anyhow::ensure!(
                    head.starts_with("http/1.1 200"),
                    "DevTools answered {:?}",
                    head.lines().next()
                );
                let len: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse().ok())
                    .ok_or_else(|| anyhow::anyhow!("no Content-Length"))?;
                anyhow::ensure!(len <= MAX_JSON, "a {len}-byte answer");
                while buf.len() < at + 4 + len {
                    let n = s.read(&mut chunk).await?;
                    anyhow::ensure!(n > 0, "the answer was cut short");
                    buf.extend_from_slice(&chunk[..n]);
                }
                return Ok(serde_json::from_slice(&buf[at + 4..at + 4 + len])?);
            }
            anyhow::ensure!(buf.len() < 64 << 10, "no end of headers");
            let n = s.read(&mut chunk).await?;
            anyhow::ensure!(n > 0, "the connection closed");
            buf.extend_from_slice(&chunk[..n]);
        }
    })
    .await?
}

/// CDP calls in order over one WebSocket; the result of the last.
async fn call(ws: &str, calls: &[(&str, serde_json::Value)]) -> Result<serde_json::Value, Status> {
    use futures::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    let unavailable =
        |e: &dyn std::fmt::Display| Status::unavailable(format!("the browser's DevTools: {e}"));
    let (mut sock, _) = tokio_tungstenite::connect_async(ws)
        .await
        .map_err(|e| unavailable(&e))?;
    let mut last = serde_json::Value::Null;
    for (id, (method, params)) in calls.iter().enumerate() {
        let m = serde_json::json!({"id": id, "method": method, "params": params});
        sock.send(Message::text(m.to_string()))
            .await
            .map_err(|e| unavailable(&e))?;
        last = loop {
            let Some(msg) = sock.next().await else {
                // Browser.close answers by closing.
                if *method == "Browser.close" {
                    break serde_json::Value::Null;
                }
                return Err(unavailable(&"the connection closed"));
            };
            let Message::Text(t) = msg.map_err(|e| unavailable(&e))? else {
                continue;
            };
            let v: serde_json::Value = serde_json::from_str(&t).map_err(|e| unavailable(&e))?;
            if v["id"] == id {
                if let Some(e) = v.get("error") {
                    return Err(Status::internal(format!("{method}: {e}")));
                }
                break v["result"].clone();
            }
        };
    }
    Ok(last)
}

/// `Page.captureScreenshot` over the page's own WebSocket.
async fn capture(ws: &str, full_page: bool) -> Result<Vec<u8>, Status> {
    use base64::Engine;
    let mut params = serde_json::json!({"format": "png"});
    if full_page {
        let m = call(ws, &[("Page.getLayoutMetrics", serde_json::json!({}))]).await?;
        let size = &m["cssContentSize"];
        let (w, h) = (
            size["width"].as_f64().unwrap_or(0.0),
            size["height"].as_f64().unwrap_or(0.0),
        );
        if w > 0.0 && h > 0.0 {
            params["captureBeyondViewport"] = true.into();
            params["clip"] = serde_json::json!({
                "x": 0, "y": 0, "width": w, "height": h.min(16_384.0), "scale": 1
            });
        }
    }
    let r = call(ws, &[("Page.captureScreenshot", params)]).await?;
    base64::engine::general_purpose::STANDARD
        .decode(r["data"].as_str().unwrap_or_default())
        .map_err(|e| Status::internal(format!("the screenshot's data: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_sizes_are_bounded() {
        assert_eq!(window_size("").unwrap(), "1280,720");
        assert_eq!(window_size("800, 600").unwrap(), "800,600");
        for bad in ["800", "0,600", "800,99999", "a,b", "800,600,1", "-1,5"] {
            assert!(window_size(bad).is_err(), "{bad}");
        }
    }
}
