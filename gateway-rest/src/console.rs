//! The web console (`clients/console`, built by `vite build`) at
//! `/console/`: the files of one directory the operator names
//! (`--console-dir`), and `index.html` for any other path under it but
//! `assets/`, since the app routes with the History API. The console is
//! a client of the public API like any other: it calls `/v1/…` with the
//! browser session.
//!
//! What it serves is the operator's own build, but the paths are a
//! visitor's: a path with a `..`, a dot-file, a backslash, an encoded byte
//! or a NUL is refused, and a symbolic link is never followed, so nothing
//! outside the directory is reachable. Every answer carries a strict
//! Content-Security-Policy (scripts of this origin only; the API and the
//! PTY WebSocket are this origin too) and may not be framed.

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, Method, StatusCode, header};
use std::path::{Path, PathBuf};

/// The console's path prefix.
pub const PREFIX: &str = "/console/";

/// The policy of every console answer: no inline script, no eval.
/// `style-src 'unsafe-inline'`: the terminal (xterm.js) adds `<style>`
/// elements; no script runs from one. `frame-src 'self'`: the browser's
/// live view. `connect-src 'self'` covers the API and the PTY WebSocket.
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; frame-src 'self'; \
object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// Whether a request path is the console's.
pub fn target(path: &str) -> bool {
    path == "/console" || path.starts_with(PREFIX)
}

/// Where a request path leads: a file under the directory, and whether a
/// missing one is a route of the app's own (anything but `assets/`, whose
/// files a page asks for by name: a missing chunk is a 404, not a page).
/// None: a path no file may have.
fn resolve(dir: &Path, path: &str) -> Option<(PathBuf, bool)> {
    let rel = path.strip_prefix(PREFIX)?;
    // A route with a trailing slash (`/console/me/`) is the route.
    let rel = rel.strip_suffix('/').unwrap_or(rel);
    if rel.is_empty() {
        return Some((dir.join("index.html"), true));
    }
    let mut out = dir.to_path_buf();
    for seg in rel.split('/') {
        let bad = seg.is_empty() || seg.starts_with('.') || seg.contains(['\\', '%', '\0', ':']);
        if bad {
            return None;
        }
        out.push(seg);
    }
    Some((out, !rel.starts_with("assets/")))
}

/// The bytes of a regular file reached without following a link, or None.
async fn read_plain(dir: &Path, file: &Path) -> Option<Vec<u8>> {
    // Every component below the directory is checked, not only the last:
    // a linked directory in the build would lead out of it.
    let rel = file.strip_prefix(dir).ok()?;
    let mut at = dir.to_path_buf();
    for c in rel.components() {
        at.push(c);
        let m = tokio::fs::symlink_metadata(&at).await.ok()?;
        if m.file_type().is_symlink() {
            return None;
        }
    }
    let m = tokio::fs::symlink_metadata(file).await.ok()?;
    if !m.is_file() {
        return None;
    }
    tokio::fs::read(file).await.ok()
}

fn content_type(file: &Path) -> &'static str {
    match file
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default()
    {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

fn answer(
    status: StatusCode,
    body: Vec<u8>,
    ctype: &str,
    cache: &'static str,
    head: bool,
) -> Response {
    let len = body.len();
    let mut r = if head {
        Body::empty().into_response()
    } else {
        Body::from(body).into_response()
    };
    *r.status_mut() = status;
    let h = r.headers_mut();
    if let Ok(v) = HeaderValue::from_str(ctype) {
        h.insert(header::CONTENT_TYPE, v);
    }
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    h.insert(
        "cross-origin-opener-policy",
        HeaderValue::from_static("same-origin"),
    );
    r
}

fn plain(status: StatusCode, text: &str, head: bool) -> Response {
    answer(
        status,
        text.as_bytes().to_vec(),
        "text/plain; charset=utf-8",
        "no-store",
        head,
    )
}

/// Serves a request whose path `target` took. `dir` None: the gateway
/// was started without a console.
pub async fn handle(dir: Option<&Path>, method: &Method, path: &str) -> Response {
    let head = *method == Method::HEAD;
    if *method != Method::GET && !head {
        let mut r = plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "the console's files are read with GET",
            false,
        );
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return r;
    }
    if path == "/console" {
        let mut r = plain(StatusCode::PERMANENT_REDIRECT, "", head);
        r.headers_mut()
            .insert(header::LOCATION, HeaderValue::from_static(PREFIX));
        return r;
    }
    let Some(dir) = dir else {
        return plain(
            StatusCode::NOT_FOUND,
            "this gateway serves no console: build it (clients/console/build.sh) and start with --console-dir",
            head,
        );
    };
    let Some((file, route)) = resolve(dir, path) else {
        return plain(StatusCode::NOT_FOUND, "no such file in the console", head);
    };
    let index = dir.join("index.html");
    let (file, bytes) = match read_plain(dir, &file).await {
        Some(b) => (file, b),
        None if route => match read_plain(dir, &index).await {
            Some(b) => (index, b),
            None => {
                return plain(
                    StatusCode::NOT_FOUND,
                    "the console directory has no index.html: build it (clients/console/build.sh)",
                    head,
                );
            }
        },
        None => return plain(StatusCode::NOT_FOUND, "no such file in the console", head),
    };
    // Vite names what it builds under assets/ by content hash: kept for a
    // year. The page itself is checked every time, so a new build is seen.
    let cache = if path.starts_with("/console/assets/") && file != dir.join("index.html") {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    answer(StatusCode::OK, bytes, content_type(&file), cache, head)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_that_could_leave_the_directory_are_refused() {
        let d = Path::new("/srv/console");
        for p in [
            "/console/../etc/passwd",
            "/console/assets/../../x",
            "/console/.env",
            "/console/a//b.js",
            "/console/a%2f..%2fb",
            "/console/a\\b.js",
            "/console/a\0.js",
            "/console/c:x.js",
        ] {
            assert!(resolve(d, p).is_none(), "{p}");
        }
    }

    #[test]
    fn files_and_routes() {
        let d = Path::new("/srv/console");
        assert_eq!(resolve(d, "/console/"), Some((d.join("index.html"), true)));
        assert_eq!(
            resolve(d, "/console/assets/index-abc.js"),
            Some((d.join("assets/index-abc.js"), false))
        );
        assert_eq!(
            resolve(d, "/console/sandboxes/sbx_1/files/notes.txt"),
            Some((d.join("sandboxes/sbx_1/files/notes.txt"), true))
        );
        assert_eq!(resolve(d, "/console/me/"), Some((d.join("me"), true)));
        assert!(resolve(d, "/console/me//").is_none());
        assert!(target("/console") && target("/console/x") && !target("/consoles"));
    }
}
