//! Wiring: keys in the data directory, the database, bootstrap, the gRPC
//! server with its layers, the ops server and background loops.

use crate::api;
use crate::app::App;
use crate::auth::jwt::JwtKeys;
use crate::auth::{Authenticator, sha256_hex};
use crate::config::ServerConfig;
use crate::domain::{sandboxes, tenants};
use crate::metrics::Metrics;
use crate::rbac::AccessLayer;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::sync::Arc;
use talon_proto::talon::worker::v1::worker_control_service_server::WorkerControlServiceServer;
use talon_proto::v1::admin_service_server::AdminServiceServer;
use talon_proto::v1::auth_service_server::AuthServiceServer;
use talon_proto::v1::filesystem_service_server::FilesystemServiceServer;
use talon_proto::v1::image_service_server::ImageServiceServer;
use talon_proto::v1::preview_service_server::PreviewServiceServer;
use talon_proto::v1::process_service_server::ProcessServiceServer;
use talon_proto::v1::pty_service_server::PtyServiceServer;
use talon_proto::v1::sandbox_service_server::SandboxServiceServer;
use talon_proto::v1::secret_service_server::SecretServiceServer;
use talon_proto::v1::tenant_service_server::TenantServiceServer;
use talon_proto::v1::volume_service_server::VolumeServiceServer;

/// Reads a secret file, creating it (mode 0600) with random content first.
pub fn secret_file(path: &Path, make: impl FnOnce() -> String) -> anyhow::Result<String> {
    if let Ok(s) = std::fs::read_to_string(path) {
        return Ok(s.trim().to_string());
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    let value = make();
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    std::io::Write::write_all(&mut f, value.as_bytes())?;
    Ok(value)
}

pub fn worker_token_path(data_dir: &Path) -> std::path::PathBuf {
    data_dir.join("keys").join("worker.token")
}

pub struct Started {
    pub app: Arc<App>,
    pub bootstrap: Option<tenants::BootstrapCredentials>,
    pub worker_token: String,
    pub grpc: tokio::task::JoinHandle<anyhow::Result<()>>,
}

/// The services this server serves, and so advertises by reflection; the
/// descriptor set also holds the internal agent protocol and services of
/// later issues (see talon_gateway::routes::NOT_YET_SERVED).
pub const SERVED: &[&str] = &[
    "grpc.health.v1.Health",
    "talon.v1.SandboxService",
    "talon.v1.AuthService",
    "talon.v1.TenantService",
    "talon.v1.AdminService",
    "talon.v1.SecretService",
    "talon.v1.VolumeService",
    "talon.v1.ImageService",
    "talon.v1.PreviewService",
    "talon.v1.ProcessService",
    "talon.v1.PtyService",
    "talon.v1.FilesystemService",
    "talon.v1.AgentService",
    "talon.v1.BrowserService",
    "talon.v1.CodeService",
    "talon.worker.v1.WorkerControlService",
    "talon.gateway.v1.PreviewTunnelService",
    "grpc.reflection.v1.ServerReflection",
    "grpc.reflection.v1alpha.ServerReflection",
];

/// CORS for gRPC-web from the configured browser origins (none: the
/// layer adds nothing, and browsers keep to their same-origin rule).
fn grpc_web_cors(origins: &[String]) -> anyhow::Result<tower_http::cors::CorsLayer> {
    use tower_http::cors::{AllowOrigin, CorsLayer};
    let list = origins
        .iter()
        .map(|o| {
            o.parse::<http::HeaderValue>()
                .map_err(|_| anyhow::anyhow!("bad gRPC-web origin {o:?}"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let names = |v: &[&'static str]| -> Vec<http::HeaderName> {
        v.iter().map(|n| http::HeaderName::from_static(n)).collect()
    };
    Ok(CorsLayer::new()
        .allow_origin(AllowOrigin::list(list))
        .allow_methods([http::Method::POST, http::Method::OPTIONS])
        .allow_headers(names(&[
            "authorization",
            "content-type",
            "x-grpc-web",
            "x-user-agent",
            "grpc-timeout",
            "connect-protocol-version",
        ]))
        .expose_headers(names(&[
            "grpc-status",
            "grpc-message",
            "grpc-status-details-bin",
            talon_core::wire::REQUEST_ID_HEADER,
        ]))
        .max_age(std::time::Duration::from_secs(600)))
}

/// Starts the control plane and returns once it listens.
pub async fn start(
    mut config: ServerConfig,
    shutdown: tokio::sync::watch::Receiver<bool>,
) -> anyhow::Result<Started> {
    anyhow::ensure!(
        config.worker_lease >= 3 * config.heartbeat_interval,
        "the worker lease ({} s) must hold at least three heartbeats ({} s each)",
        config.worker_lease.as_secs(),
        config.heartbeat_interval.as_secs()
    );
    std::fs::create_dir_all(&config.data_dir)?;
    // Traversable (not listable) by others: a sandbox's mapped root must
    // reach its bundle under DATA_DIR/worker. Secrets live in keys/ (0700).
    std::fs::set_permissions(&config.data_dir, std::fs::Permissions::from_mode(0o711))?;
    let jwt_secret = secret_file(&config.data_dir.join("keys").join("jwt.key"), || {
        crate::ids::random_token(32)
    })?;
    let worker_token = secret_file(&worker_token_path(&config.data_dir), || {
        format!("wkr_{}", crate::ids::random_token(32))
    })?;
    // This server's name among those sharing the database (the duties
    // lease's holder): kept, so a restarted server takes its own lease
    // back at once instead of waiting for it to expire.
    let server_id = secret_file(&config.data_dir.join("keys").join("server.id"), || {
        crate::ids::new_id("srv")
    })?;
    config.server_id = server_id.clone();
    let preview_secret = secret_file(&config.data_dir.join("keys").join("preview.key"), || {
        crate::ids::random_token(32)
    })?;
    let secrets_hex = secret_file(&config.data_dir.join("keys").join("secrets.key"), || {
        let mut k = [0u8; 32];
        rand::RngCore::fill_bytes(&mut rand::rngs::OsRng, &mut k);
        hex::encode(k)
    })?;
    let secrets_key: [u8; 32] = hex::decode(&secrets_hex)?
        .try_into()
        .map_err(|_| anyhow::anyhow!("keys/secrets.key must hold 32 bytes in hex"))?;
    let db = crate::db::connect(&config.database_url).await?;
    let metrics = Metrics::new();
    let jwt = JwtKeys::new(jwt_secret.as_bytes(), config.access_token_ttl.as_secs());
    let app = App::new(
        db.clone(),
        jwt.clone(),
        config.clone(),
        metrics.clone(),
        crate::app::Keys {
            secrets_key,
            worker_token: worker_token.clone(),
            peer_token: crate::auth::peer_token(&jwt_secret),
            preview: crate::auth::preview::PreviewKeys::new(preview_secret.as_bytes()),
        },
    );
    let bootstrap = tenants::bootstrap(&app).await?;
    if let Some(b) = &bootstrap {
        let path = config.data_dir.join("bootstrap-credentials.json");
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&path)?;
        std::io::Write::write_all(&mut f, serde_json::to_string_pretty(b)?.as_bytes())?;
    }

    let auth = Authenticator {
        db: db.clone(),
        jwt,
        worker_token_hash: sha256_hex(&worker_token),
        peer_token_hash: sha256_hex(app.peer_token()),
        platform_tenant_id: app.platform_tenant_id().clone(),
        cache: app.principals().clone(),
        preview: app.preview().clone(),
    };
    let access = AccessLayer::new(auth, app.audit().clone(), metrics.clone());

    let (health, health_svc) = tonic_health::server::health_reporter();
    health
        .set_serving::<SandboxServiceServer<api::sandbox::SandboxApi>>()
        .await;
    let served = SERVED;
    let reflection = || {
        let mut b = tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(talon_proto::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET);
        for s in served {
            b = b.with_service_name(*s);
        }
        b
    };
    let reflection_v1 = reflection().build_v1()?;
    let reflection_v1alpha = reflection().build_v1alpha()?;

    let proxy = api::agent_proxy::AgentProxy(app.clone());
    let listener = tokio::net::TcpListener::bind(config.grpc_listen).await?;
    let incoming = crate::listener::limited_incoming(listener, config.grpc_connections);
    let mut stop = shutdown.clone();
    // Dead or silent peers are found by pings; requests are taken on
    // their connections (listener.rs) before anything else.
    let router = tonic::transport::Server::builder()
        .accept_http1(true)
        .initial_stream_window_size(Some(talon_proto::h2::STREAM_WINDOW))
        .initial_connection_window_size(Some(talon_proto::h2::CONNECTION_WINDOW))
        .max_frame_size(Some(talon_proto::h2::MAX_FRAME))
        .http2_keepalive_interval(config.grpc_connections.keepalive_interval())
        .http2_keepalive_timeout(Some(config.grpc_connections.keepalive_timeout))
        .layer(crate::listener::ConnLayer(config.request_bodies))
        .layer(grpc_web_cors(&config.grpc_web_origins)?)
        .layer(tonic_web::GrpcWebLayer::new())
        .layer(access)
        .add_service(health_svc)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        .add_service(SandboxServiceServer::new(api::sandbox::SandboxApi(
            app.clone(),
        )))
        .add_service(AuthServiceServer::new(api::auth::AuthApi(app.clone())))
        .add_service(TenantServiceServer::new(api::tenant::TenantApi(
            app.clone(),
        )))
        .add_service(AdminServiceServer::new(api::admin::AdminApi(app.clone())))
        .add_service(SecretServiceServer::new(api::secret::SecretApi(
            app.clone(),
        )))
        .add_service(VolumeServiceServer::new(api::volume::VolumeApi(
            app.clone(),
        )))
        .add_service(
            ImageServiceServer::new(api::image::ImageApi(app.clone()))
                .max_decoding_message_size(talon_core::wire::MAX_MESSAGE_BYTES),
        )
        .add_service(ProcessServiceServer::new(proxy.clone()).max_decoding_message_size(talon_core::wire::MAX_MESSAGE_BYTES))
        .add_service(PtyServiceServer::new(proxy.clone()))
        .add_service(
            talon_proto::v1::agent_service_server::AgentServiceServer::new(proxy.clone()),
        )
        .add_service(
            talon_proto::v1::browser_service_server::BrowserServiceServer::new(proxy.clone()),
        )
        .add_service(
            talon_proto::v1::code_service_server::CodeServiceServer::new(proxy.clone())
                .max_decoding_message_size(talon_core::wire::MAX_MESSAGE_BYTES),
        )
        .add_service(PreviewServiceServer::new(proxy.clone()))
        .add_service(
            talon_proto::talon::gateway::v1::preview_tunnel_service_server::PreviewTunnelServiceServer::new(
                proxy.clone(),
            ),
        )
        .add_service(FilesystemServiceServer::new(proxy).max_decoding_message_size(talon_core::wire::MAX_MESSAGE_BYTES))
        .add_service(WorkerControlServiceServer::new(api::worker::WorkerApi(
            app.clone(),
        )));
    let audit = app.audit().clone();
    let grpc = tokio::spawn(async move {
        router
            .serve_with_incoming_shutdown(incoming, async move {
                let _ = stop.wait_for(|s| *s).await;
            })
            .await?;
        // The last calls' records are stored before we are done.
        audit.flush().await;
        Ok(())
    });

    let ops_listener = tokio::net::TcpListener::bind(config.ops_listen).await?;
    tokio::spawn(crate::ops::serve(
        app.clone(),
        ops_listener,
        config.ops_connections,
        shutdown.clone(),
    ));

    // Other servers on the same PostgreSQL hear what changes here, and
    // this one what changes there (peers.rs).
    crate::peers::serve(app.clone(), app.config().database_url.clone());

    // The once-per-platform duties run on the server holding their lease
    // (domain::lease): with several servers on one database, one at a time.
    let reaper = app.clone();
    let mut stop = shutdown;
    tokio::spawn(async move {
        use crate::domain::lease;
        let me = server_id;
        let ttl = reaper.config().duty_lease_ttl;
        let mut held: Option<i64> = None;
        let mut autopilot = crate::domain::autopilot::Autopilot::default();
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
        loop {
            tokio::select! {
                _ = tick.tick() => {
                    let now = match lease::acquire(reaper.db(), lease::DUTIES, &me, ttl).await {
                        Ok(h) => h.map(|h| h.epoch),
                        Err(e) => {
                            tracing::warn!(error = %e, "duties lease not renewed");
                            None
                        }
                    };
                    if now != held {
                        match now {
                            Some(epoch) => tracing::info!(server = %me, epoch, "this server runs the duties (timeouts, secret expiry, autopilot)"),
                            None => tracing::info!(server = %me, "another server runs the duties"),
                        }
                        reaper.metrics().duties_leader.set(i64::from(now.is_some()));
                        held = now;
                    }
                    if held.is_none() {
                        continue;
                    }
                    if let Err(e) = sandboxes::enforce_timeouts(&reaper).await {
                        tracing::warn!(error = %e, "timeout loop");
                    }
                    if let Err(e) = crate::domain::secrets::purge_expired(&reaper).await {
                        tracing::warn!(error = %e, "secret expiry loop");
                    }
                    if let Err(e) = autopilot.tick(&reaper).await {
                        tracing::warn!(error = %e, "autopilot");
                    }
                }
                _ = async { let _ = stop.wait_for(|s| *s).await; } => {
                    if held.is_some() {
                        let _ = lease::release(reaper.db(), lease::DUTIES, &me).await;
                    }
                    break;
                }
            }
        }
    });
    Ok(Started {
        app,
        bootstrap,
        worker_token,
        grpc,
    })
}

#[cfg(test)]
mod tests {
    /// Every public service is either served here or on the gateway's list
    /// of services not served yet, never both: the REST surface, the
    /// OpenAPI document and reflection agree.
    #[test]
    fn served_and_not_yet_served_cover_the_contract() {
        let fds: prost_types::FileDescriptorSet =
            prost::Message::decode(talon_proto::FILE_DESCRIPTOR_SET).unwrap();
        let unserved = talon_gateway::routes::NOT_YET_SERVED;
        for f in fds.file.iter().filter(|f| f.package() == "talon.v1") {
            for svc in &f.service {
                let name = format!("talon.v1.{}", svc.name());
                let served = super::SERVED.contains(&name.as_str());
                assert!(
                    served != unserved.contains(&name.as_str()),
                    "{name}: served {served}, on NOT_YET_SERVED {}",
                    unserved.contains(&name.as_str())
                );
            }
        }
    }
}
