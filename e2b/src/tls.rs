//! TLS for the E2B listeners, from a PEM certificate chain and key: what a
//! deployment with wildcard DNS needs, where E2B's SDKs (given only
//! `E2B_DOMAIN`) call `https://api.{domain}` and
//! `https://{port}-{id}.{domain}`. HTTP/2 and HTTP/1.1 by ALPN.

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::path::Path;
use std::sync::Arc;
use tokio_rustls::rustls;

/// The server configuration of a certificate chain and its key.
pub fn server_config(cert: &Path, key: &Path) -> anyhow::Result<Arc<rustls::ServerConfig>> {
    let chain = CertificateDer::pem_file_iter(cert)
        .map_err(|e| anyhow::anyhow!("{}: {e}", cert.display()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| anyhow::anyhow!("{}: {e}", cert.display()))?;
    anyhow::ensure!(!chain.is_empty(), "{}: no certificate", cert.display());
    let key =
        PrivateKeyDer::from_pem_file(key).map_err(|e| anyhow::anyhow!("{}: {e}", key.display()))?;
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(chain, key)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}
