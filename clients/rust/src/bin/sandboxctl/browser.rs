//! `browser`: the sandbox's headless Chromium and its CDP URL.

use super::*;

#[derive(Subcommand)]
pub enum BrowserCmd {
    /// Starts it (or shows the running one); prints its CDP URL.
    Start {
        id: String,
        /// "W,H" (1280,720 by default).
        #[arg(long)]
        window_size: Option<String>,
        /// How long the URLs' token lasts, in seconds (1 h by default).
        #[arg(long)]
        ttl: Option<u64>,
    },
    /// Stops it.
    Stop { id: String },
    /// Writes a PNG of the active page to FILE ("-" is stdout).
    Screenshot {
        id: String,
        #[arg(short = 'O', long = "out", default_value = "screenshot.png")]
        out: String,
        /// The whole scrollable page.
        #[arg(long)]
        full_page: bool,
    },
    /// Prints the running browser's CDP URL (with a fresh token).
    CdpUrl { id: String },
}

pub async fn browser(cli: &Cli, b: &BrowserCmd) -> anyhow::Result<i32> {
    let show = |info: &talon_proto::v1::Browser| {
        let state = talon_proto::v1::BrowserState::try_from(info.state)
            .map(|s| {
                s.as_str_name()
                    .trim_start_matches("BROWSER_STATE_")
                    .to_lowercase()
            })
            .unwrap_or_default();
        let v = json!({
            "state": state, "cdp_url": info.cdp_url,
            "websocket_debugger_url": info.websocket_debugger_url,
            "live_view_url": info.live_view_url, "pid": info.pid,
            "window_size": info.window_size, "error": info.error,
        });
        print(cli.output, &v, || {
            if info.cdp_url.is_empty() {
                format!("{state} {}", info.error).trim().to_string()
            } else {
                format!("{}\nlive view: {}", info.cdp_url, info.live_view_url)
            }
        });
    };
    match b {
        BrowserCmd::Start {
            id,
            window_size,
            ttl,
        } => {
            let s = client(cli).await?.get(id).await?;
            let info = s
                .browser()
                .start(window_size.as_deref(), ttl.map(Duration::from_secs))
                .await?;
            show(&info);
        }
        BrowserCmd::Stop { id } => {
            let info = client(cli).await?.get(id).await?.browser().stop().await?;
            show(&info);
        }
        BrowserCmd::Screenshot { id, out, full_page } => {
            let s = client(cli).await?.get(id).await?;
            let png = s.browser().screenshot(*full_page).await?;
            if out == "-" {
                std::io::Write::write_all(&mut std::io::stdout(), &png)?;
            } else {
                std::fs::write(out, &png)?;
                eprintln!("{out}: {} bytes", png.len());
            }
        }
        BrowserCmd::CdpUrl { id } => {
            let info = client(cli).await?.get(id).await?.browser().get().await?;
            if info.cdp_url.is_empty() {
                anyhow::bail!("the browser of {id} is not running (sandboxctl browser start {id})");
            }
            println!("{}", info.cdp_url);
        }
    }
    Ok(0)
}
