//! The E2B listeners over TLS with host routing, as a deployment with a
//! wildcard certificate and DNS runs them: `api.{domain}` is the control
//! plane, `{port}-{id}.{domain}` a sandbox, both on the sandbox listener.
//! No server behind it: the answers checked are the facade's own (a
//! missing credential), which prove where the request was routed.

use std::process::Command;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_rustls::rustls;

const DOMAIN: &str = "talon.test";

async fn get(
    addr: std::net::SocketAddr,
    roots: Arc<rustls::RootCertStore>,
    host: &str,
    path: &str,
) -> String {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let name = rustls_pki_types::ServerName::try_from(host.to_string()).unwrap();
    let mut tls = connector.connect(name, tcp).await.unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    tls.write_all(req.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    let _ = tls.read_to_end(&mut out).await;
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test]
async fn tls_and_host_routing() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    let ok = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
        ])
        .args(["-nodes", "-days", "1", "-subj", "/CN=talon.test"])
        .args(["-addext", &format!("subjectAltName=DNS:*.{DOMAIN}")])
        .args(["-addext", "basicConstraints=critical,CA:FALSE"])
        .args(["-addext", "extendedKeyUsage=serverAuth"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("openssl")
        .status
        .success();
    assert!(ok, "openssl made no certificate");

    let mut config = talon_e2b::E2bConfig::new("http://127.0.0.1:1");
    config.domain = Some(DOMAIN.into());
    config.tls = Some(talon_e2b::tls::server_config(&cert, &key).unwrap());
    let e = talon_e2b::E2b::new(config).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (_stop, stop) = tokio::sync::watch::channel(false);
    tokio::spawn(talon_e2b::serve_sandbox(e, listener, stop));

    let mut roots = rustls::RootCertStore::empty();
    use rustls_pki_types::pem::PemObject;
    for c in rustls_pki_types::CertificateDer::pem_file_iter(&cert).unwrap() {
        roots.add(c.unwrap()).unwrap();
    }
    let roots = Arc::new(roots);

    // envd of one sandbox, by host name: it wants the sandbox's token.
    let id = "abcdefghijklmnopqrstuvwxyz";
    let r = get(
        addr,
        roots.clone(),
        &format!("49983-{id}.{DOMAIN}"),
        "/health",
    )
    .await;
    assert!(r.starts_with("HTTP/1.1 401"), "{r}");
    assert!(r.contains("missing X-Access-Token"), "{r}");
    // Another port of it: the port proxy, which wants the token too.
    let r = get(addr, roots.clone(), &format!("3000-{id}.{DOMAIN}"), "/").await;
    assert!(r.starts_with("HTTP/1.1 401"), "{r}");
    assert!(r.contains("sandbox's access token"), "{r}");
    // The control plane, by host name: it wants an API key.
    let r = get(
        addr,
        roots.clone(),
        &format!("api.{DOMAIN}"),
        "/v2/sandboxes",
    )
    .await;
    assert!(r.starts_with("HTTP/1.1 401"), "{r}");
    assert!(r.contains("missing X-API-KEY"), "{r}");
    // A name that routes nowhere.
    let r = get(addr, roots, &format!("www.{DOMAIN}"), "/health").await;
    assert!(r.starts_with("HTTP/1.1 400"), "{r}");
}
