//! The control plane's shared state, handed to every service.

use crate::auth::jwt::JwtKeys;
use crate::cache::ShortCache;
use crate::config::ServerConfig;
use crate::db::entity::sandbox;
use crate::metrics::Metrics;
use crate::workers::WorkerHub;
use sea_orm::DatabaseConnection;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::broadcast;

/// A sandbox after a state change, or with something that happened in
/// it, as WatchSandboxEvents sends it.
#[derive(Clone, Debug)]
pub struct SandboxEvent {
    pub sandbox: sandbox::Model,
    pub kind: EventKind,
    /// Details (how a browser ended).
    pub message: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    StateChanged,
    BrowserCrashed,
    /// Paused by its worker for being idle.
    IdlePaused,
    /// Resumed for a call (`auto_resume`); the message names the call.
    AutoResumed,
}

pub struct App {
    pub db: DatabaseConnection,
    /// The audit log's queue (its writer task stores it).
    pub audit: crate::audit::AuditLog,
    pub jwt: JwtKeys,
    /// Signs preview links (DATA_DIR/keys/preview.key).
    pub preview: crate::auth::preview::PreviewKeys,
    pub config: ServerConfig,
    pub hub: WorkerHub,
    pub metrics: Metrics,
    pub events: broadcast::Sender<SandboxEvent>,
    pub platform_tenant_id: Arc<std::sync::RwLock<String>>,
    /// Encrypts tenant secrets at rest (DATA_DIR/keys/secrets.key).
    pub secrets_key: [u8; 32],
    /// Presented to workers' data planes (DATA_DIR/keys/worker.token).
    pub worker_token: String,
    /// Presented to the other servers on the database (auth::peer_token).
    pub peer_token: String,
    /// One HTTP/2 channel per worker data plane, reused by every call.
    pub data_channels: Mutex<HashMap<String, tonic::transport::Channel>>,
    /// Recently authenticated principals; cleared when a user or key changes.
    pub principals: Arc<ShortCache<crate::auth::Principal>>,
    /// Running sandboxes' rows for GetSandbox and the data-plane calls;
    /// forgotten on every change to a sandbox (domain::sandboxes::publish).
    pub running: ShortCache<sandbox::Model>,
    /// Tells the other servers on the same database what changed here.
    pub peers: crate::peers::Peers,
    /// Failed sign-ins per email (see `auth::throttle`).
    pub logins: crate::auth::throttle::LoginThrottle,
    /// Browsers watched for a crash, as "sandbox/pid" (domain::browser).
    pub browser_watches: Mutex<std::collections::HashSet<String>>,
    tenant_locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

/// The platform's secrets an App holds besides its JWT keys.
pub struct Keys {
    pub secrets_key: [u8; 32],
    pub worker_token: String,
    pub peer_token: String,
    pub preview: crate::auth::preview::PreviewKeys,
}

impl App {
    pub fn new(
        db: DatabaseConnection,
        jwt: JwtKeys,
        config: ServerConfig,
        metrics: Metrics,
        keys: Keys,
    ) -> Arc<Self> {
        let Keys {
            secrets_key,
            worker_token,
            peer_token,
            preview,
        } = keys;
        let (events, _) = broadcast::channel(1024);
        Arc::new(App {
            audit: crate::audit::AuditLog::start(db.clone()),
            hub: WorkerHub::new(metrics.clone()),
            db,
            jwt,
            preview,
            metrics,
            events,
            platform_tenant_id: Arc::new(std::sync::RwLock::new(String::new())),
            secrets_key,
            peer_token,
            worker_token,
            data_channels: Mutex::new(HashMap::new()),
            principals: Arc::new(ShortCache::new(config.auth_cache_ttl)),
            running: ShortCache::new(config.sandbox_cache_ttl),
            peers: Default::default(),
            logins: crate::auth::throttle::LoginThrottle::new(config.login_throttle),
            browser_watches: Mutex::new(Default::default()),
            tenant_locks: Mutex::new(HashMap::new()),
            config,
        })
    }

    /// Users or keys changed: every cached principal goes, here and on the
    /// other servers.
    pub fn forget_principals(&self) {
        self.principals.clear();
        self.peers.send(crate::peers::Stale::Principals);
    }

    /// A sandbox event, to this server's watchers and, through the other
    /// servers on the database, to theirs (each reloads the row).
    pub fn emit(&self, e: SandboxEvent) {
        self.running.forget(&e.sandbox.id);
        self.peers.send(crate::peers::Stale::Event {
            kind: e.kind,
            sandbox_id: e.sandbox.id.clone(),
            message: e.message.clone(),
        });
        let _ = self.events.send(e);
    }

    /// A sandbox changed: its cached row goes, here and on the others.
    pub fn forget_sandbox(&self, id: &str) {
        self.running.forget(id);
        self.peers
            .send(crate::peers::Stale::Sandbox(id.to_string()));
    }

    /// The HTTP/2 channel to a worker's data plane (or a peer server),
    /// made once and reused by every call (agent calls and image imports
    /// alike).
    pub fn data_channel(&self, addr: &str) -> crate::error::Result<tonic::transport::Channel> {
        let mut cache = self.data_channels.lock().expect("lock");
        if let Some(c) = cache.get(addr) {
            return Ok(c.clone());
        }
        // A worker's data plane is host:port; a peer server's, a URL.
        let url = if addr.contains("://") {
            addr.to_string()
        } else {
            format!("http://{addr}")
        };
        let c = tonic::transport::Endpoint::from_shared(url)
            .map_err(|e| crate::error::Error::Internal(format!("worker address: {e}")))?
            .tcp_nodelay(true)
            .initial_stream_window_size(Some(talon_proto::h2::STREAM_WINDOW))
            .initial_connection_window_size(Some(talon_proto::h2::CONNECTION_WINDOW))
            .max_frame_size(Some(talon_proto::h2::MAX_FRAME))
            .connect_lazy();
        cache.insert(addr.to_string(), c.clone());
        Ok(c)
    }

    /// Serializes quota-checked changes within one tenant on this server.
    /// (On PostgreSQL the tenant row is also locked inside the transaction,
    /// which covers several servers.)
    pub fn tenant_lock(&self, tenant_id: &str) -> Arc<tokio::sync::Mutex<()>> {
        self.tenant_locks
            .lock()
            .expect("lock")
            .entry(tenant_id.to_string())
            .or_default()
            .clone()
    }
}

#[cfg(test)]
impl App {
    /// An app on a fresh SQLite database in a temporary directory, with
    /// no worker connected: for domain tests that need a store.
    pub async fn for_tests() -> (Arc<App>, tempfile::TempDir) {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut config = ServerConfig::with_defaults(dir.path().to_path_buf());
        config.database_url = crate::db::sqlite_url(dir.path());
        let db = crate::db::connect(&config.database_url)
            .await
            .expect("database");
        let app = App::new(
            db,
            JwtKeys::new(b"test-secret-test-secret-test-secret", 900),
            config,
            Metrics::new(),
            Keys {
                secrets_key: [7u8; 32],
                worker_token: "worker-token".into(),
                peer_token: "peer-token".into(),
                preview: crate::auth::preview::PreviewKeys::new(b"preview-secret-preview-secret"),
            },
        );
        (app, dir)
    }
}
