//! Preview links: a signed token for one port of a sandbox the caller may
//! see, and the URL (path-prefix mode) that carries it.

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
    let ttl = ttl_secs.unwrap_or(DEFAULT_TTL_SECS);
    if ttl == 0 || ttl > MAX_TTL_SECS {
        return Err(Error::InvalidArgument(format!(
            "ttl must be between 1 s and {MAX_TTL_SECS} s"
        )));
    }
    // Tenant-scoped: another tenant's sandbox is NOT_FOUND.
    let row = sandboxes::get(app, p, sandbox_id).await?;
    let (token, exp) = app.preview.issue(&row.id, &row.tenant_id, port, ttl)?;
    app.metrics
        .preview_tokens
        .with_label_values(&["signed"])
        .inc();
    let url = format!(
        "{}/preview/{}/{port}/?token={token}",
        app.config.public_url.trim_end_matches('/'),
        row.id
    );
    Ok(PreviewLink {
        token,
        url,
        expires_at_secs: exp,
    })
}
