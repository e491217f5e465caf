//! The console's files through a real gateway listener, with raw HTTP/1.1
//! requests (a client library would tidy the paths a visitor may send):
//! the page and its assets with their headers, the app's routes, and
//! nothing outside the directory, by `..`, an encoded slash or a link.

use std::path::PathBuf;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

struct Served {
    addr: std::net::SocketAddr,
    dir: PathBuf,
    _stop: tokio::sync::watch::Sender<bool>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A gateway over a built console of three files, beside a secret file
/// and a link to it. Its server URL leads nowhere: the console needs none.
async fn serve(with_console: bool) -> Served {
    let root = std::env::temp_dir().join(format!(
        "talon-console-test-{}-{}",
        std::process::id(),
        rand_suffix()
    ));
    let dir = root.join("dist");
    std::fs::create_dir_all(dir.join("assets")).unwrap();
    std::fs::write(
        dir.join("index.html"),
        "<!doctype html><title>console</title>",
    )
    .unwrap();
    std::fs::write(dir.join("assets/index-abc123.js"), "console.log(1)").unwrap();
    std::fs::write(dir.join("assets/index-abc123.css"), "body{}").unwrap();
    std::fs::write(root.join("secret.txt"), "SECRET").unwrap();
    std::os::unix::fs::symlink(root.join("secret.txt"), dir.join("assets/leak.js")).unwrap();
    std::os::unix::fs::symlink(&root, dir.join("up")).unwrap();

    let mut config = talon_gateway::GatewayConfig::new("http://127.0.0.1:9");
    config.console_dir = with_console.then(|| dir.clone());
    let gw = talon_gateway::Gateway::new(config).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::watch::channel(false);
    tokio::spawn(talon_gateway::serve(gw, listener, rx));
    Served {
        addr,
        dir: root,
        _stop: tx,
    }
}

fn rand_suffix() -> u64 {
    use std::time::{SystemTime, UNIX_EPOCH};
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

struct Answer {
    status: u16,
    head: String,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
        })
    }
}

async fn raw(s: &Served, method: &str, path: &str) -> Answer {
    let mut c = tokio::net::TcpStream::connect(s.addr).await.unwrap();
    let req = format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    c.write_all(req.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    c.read_to_end(&mut out).await.unwrap();
    let text = String::from_utf8_lossy(&out).to_string();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    Answer {
        status,
        head: head.to_string(),
        body: body.to_string(),
    }
}

#[tokio::test]
async fn the_page_its_assets_and_its_routes() {
    let s = serve(true).await;
    let page = raw(&s, "GET", "/console/").await;
    assert_eq!(page.status, 200, "{}", page.head);
    assert!(page.body.contains("<title>console</title>"));
    assert_eq!(
        page.header("content-type").as_deref(),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(page.header("cache-control").as_deref(), Some("no-cache"));
    let csp = page.header("content-security-policy").unwrap();
    assert!(csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'"));
    assert_eq!(page.header("x-frame-options").as_deref(), Some("DENY"));
    assert_eq!(
        page.header("x-content-type-options").as_deref(),
        Some("nosniff")
    );

    let js = raw(&s, "GET", "/console/assets/index-abc123.js").await;
    assert_eq!(js.status, 200);
    assert_eq!(js.body, "console.log(1)");
    assert!(
        js.header("content-type")
            .unwrap()
            .starts_with("text/javascript")
    );
    assert!(js.header("cache-control").unwrap().contains("immutable"));
    let css = raw(&s, "GET", "/console/assets/index-abc123.css").await;
    assert!(css.header("content-type").unwrap().starts_with("text/css"));

    // The app's own routes are its page; a missing asset is not.
    for route in ["/console/sandboxes", "/console/sandboxes/sbx_1/files/a.txt"] {
        let r = raw(&s, "GET", route).await;
        assert_eq!(r.status, 200, "{route}");
        assert!(r.body.contains("<title>console</title>"), "{route}");
    }
    assert_eq!(
        raw(&s, "GET", "/console/assets/gone-1.js").await.status,
        404
    );

    let head = raw(&s, "HEAD", "/console/").await;
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    let moved = raw(&s, "GET", "/console").await;
    assert_eq!(moved.status, 308);
    assert_eq!(moved.header("location").as_deref(), Some("/console/"));
    let post = raw(&s, "POST", "/console/").await;
    assert_eq!(post.status, 405);
    assert_eq!(post.header("allow").as_deref(), Some("GET, HEAD"));
}

#[tokio::test]
async fn nothing_outside_the_directory_is_served() {
    let s = serve(true).await;
    for path in [
        "/console/../secret.txt",
        "/console/assets/../../secret.txt",
        "/console/assets/..%2f..%2fsecret.txt",
        "/console/%2e%2e/secret.txt",
        "/console/assets/leak.js",
        "/console/up/secret.txt",
        "/console/.%2e/secret.txt",
    ] {
        let r = raw(&s, "GET", path).await;
        assert!(!r.body.contains("SECRET"), "{path} served the file outside");
        assert!(
            r.status == 404 || (r.status == 200 && r.body.contains("<title>console</title>")),
            "{path}: {} {}",
            r.status,
            r.body
        );
    }
}

#[tokio::test]
async fn a_gateway_without_a_console_says_so() {
    let s = serve(false).await;
    let r = raw(&s, "GET", "/console/").await;
    assert_eq!(r.status, 404);
    assert!(r.body.contains("--console-dir"), "{}", r.body);
}
