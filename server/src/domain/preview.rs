//! Preview links: a signed token for one port of a sandbox the caller may
//! see, and the URL that carries it: in subdomain form when a preview
//! domain is set (the page gets an origin of its own), else in path form
//! (served in an opaque origin; see the gateway's `preview`).

use crate::app::App;
use crate::auth::Principal;
use crate::auth::preview::{DEFAULT_TTL_SECS, MAX_TTL_SECS};
use crate::domain::sandboxes;
use crate::error::{Error, Result};

pub struct PreviewLink {
    pub token: String,
    pub url: String,
    pub expires_at_secs: u64,
}

pub async fn create_token(
    app: &App,
    p: &Principal,
    sandbox_id: &str,
    port: u32,
    ttl_secs: Option<u64>,
) -> Result<PreviewLink> {
    if port == 0 || port > 65_535 {
        return Err(Error::InvalidArgument("port must be 1-65535".into()));
    }
    // What answers there drives (or poses as) the sandbox's browser: it is
    // reached only by BrowserService's URLs (see auth::preview).
    if port == crate::auth::preview::CDP_PORT {
        return Err(Error::InvalidArgument(format!(
            "port {port} is the sandbox browser's DevTools port: use BrowserService's cdp_url, never a preview"
        )));
    }
    let ttl = ttl_within(ttl_secs, DEFAULT_TTL_SECS, MAX_TTL_SECS)?;
    // Tenant-scoped: another tenant's sandbox is NOT_FOUND.
    let row = sandboxes::get(
        app,
        &crate::domain::tenants::TenantScope::own(p),
        sandbox_id,
    )
    .await?;
    let (token, exp) = app.preview().issue(&row.id, &row.tenant_id, port, ttl)?;
    app.metrics()
        .preview_tokens
        .with_label_values(&["signed"])
        .inc();
    let url = link(
        &app.config().public_url,
        app.config().preview_domain.as_deref(),
        &row.id,
        port,
        &token,
    );
    Ok(PreviewLink {
        token,
        url,
        expires_at_secs: exp,
    })
}

/// The link to a port of a sandbox: `{scheme}://{port}-{sandbox}.{domain}`
/// with the public URL's scheme and port, or the public URL's
/// `/preview/{sandbox}/{port}/`.
pub fn link(
    public_url: &str,
    domain: Option<&str>,
    sandbox: &str,
    port: u32,
    token: &str,
) -> String {
    let base = public_url.trim_end_matches('/');
    let Some(domain) = domain else {
        return format!("{base}/preview/{sandbox}/{port}/?token={token}");
    };
    let (scheme, rest) = base.split_once("://").unwrap_or(("http", base));
    let authority = rest.split('/').next().unwrap_or("");
    // The port of the public URL, if it names one (after an IPv6 literal's `]`).
    let public_port = authority
        .rsplit_once(':')
        .filter(|(h, p)| {
            !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) && !h.ends_with('[')
        })
        .map(|(_, p)| format!(":{p}"))
        .unwrap_or_default();
    // Host names are case-insensitive: browsers send them lowercased.
    let sandbox = sandbox.to_ascii_lowercase();
    format!("{scheme}://{port}-{sandbox}.{domain}{public_port}/?token={token}")
}

/// A link's lifetime: the default when unset, else 1 s to `max`.
pub(crate) fn ttl_within(asked: Option<u64>, default: u64, max: u64) -> Result<u64> {
    let ttl = asked.unwrap_or(default);
    if ttl == 0 || ttl > max {
        return Err(Error::InvalidArgument(format!(
            "ttl must be between 1 s and {max} s"
        )));
    }
    Ok(ttl)
}

/// A signed URL for one file operation on a sandbox the caller may see.
pub async fn create_file_url(
    app: &App,
    p: &Principal,
    sandbox_id: &str,
    path: &str,
    op: crate::auth::file_url::FileOp,
    ttl_secs: Option<u64>,
) -> Result<PreviewLink> {
    use crate::auth::file_url::{DEFAULT_TTL_SECS, FileGrant, FileOp, MAX_TTL_SECS};
    if path.is_empty() || path.len() > 4096 || path.contains('\0') {
        return Err(Error::InvalidArgument(
            "path must be 1 to 4096 bytes without NUL".into(),
        ));
    }
    let ttl = ttl_within(ttl_secs, DEFAULT_TTL_SECS, MAX_TTL_SECS)?;
    let row = sandboxes::get(
        app,
        &crate::domain::tenants::TenantScope::own(p),
        sandbox_id,
    )
    .await?;
    let grant = FileGrant {
        sandbox_id: &row.id,
        tenant_id: &row.tenant_id,
        actor_id: p.actor_id(),
        path,
        op,
    };
    let (token, exp) = app.preview().issue_file(&grant, ttl)?;
    let verb = match op {
        FileOp::Read => "read",
        FileOp::Write => "write",
    };
    // Everything but unreserved characters and '/' is escaped.
    const PATH: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'.')
        .remove(b'_')
        .remove(b'~')
        .remove(b'/');
    let enc = |s: &str| percent_encoding::utf8_percent_encode(s, PATH).to_string();
    let url = format!(
        "{}/v1/sandboxes/{}/files:{verb}?path={}&token={token}",
        app.config().public_url.trim_end_matches('/'),
        row.id,
        enc(path)
    );
    Ok(PreviewLink {
        token,
        url,
        expires_at_secs: exp,
    })
}

#[cfg(test)]
mod tests {
    use super::link;

    #[test]
    fn links_in_both_forms() {
        assert_eq!(
            link("http://127.0.0.1:8080/", None, "sbx_a", 3000, "t"),
            "http://127.0.0.1:8080/preview/sbx_a/3000/?token=t"
        );
        assert_eq!(
            link(
                "http://127.0.0.1:8080",
                Some("localhost"),
                "sbx_a",
                3000,
                "t"
            ),
            "http://3000-sbx_a.localhost:8080/?token=t"
        );
        assert_eq!(
            link(
                "https://talon.example.com",
                Some("preview.example.net"),
                "sbx_a",
                80,
                "t"
            ),
            "https://80-sbx_a.preview.example.net/?token=t"
        );
        assert_eq!(
            link("http://[::1]:9000/x", Some("localhost"), "sbx_a", 1, "t"),
            "http://1-sbx_a.localhost:9000/?token=t"
        );
    }
}
