//! The control plane's shared state, handed to every service.

use crate::auth::jwt::JwtKeys;
use crate::cache::ShortCache;
use crate::config::ServerConfig;
use crate::db::entity::sandbox;
use crate::metrics::Metrics;
use crate::workers::WorkerHub;
use crate::workers::calls::WorkerCalls;
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

/// The control plane's components, each a handle with its own API; the
/// fields are private, so what a handler or domain function uses is named
/// by the accessor it calls.
pub struct App {
    db: DatabaseConnection,
    /// The audit log's queue (its writer task stores it).
    audit: crate::audit::AuditLog,
    jwt: JwtKeys,
    /// Signs preview links (DATA_DIR/keys/preview.key).
    preview: crate::auth::preview::PreviewKeys,
    config: ServerConfig,
    /// The sessions of the workers connected here.
    hub: WorkerHub,
    /// Every call to a worker (`workers::calls`).
    workers: Arc<dyn WorkerCalls>,
    metrics: Metrics,
    events: broadcast::Sender<SandboxEvent>,
    platform_tenant_id: Arc<std::sync::RwLock<String>>,
    /// Encrypts tenant secrets at rest (DATA_DIR/keys/secrets.key).
    secrets_key: [u8; 32],
    /// Presented to the other servers on the database (auth::peer_token).
    peer_token: String,
    /// Recently authenticated principals; cleared when a user or key changes.
    principals: Arc<ShortCache<crate::auth::Principal>>,
    /// Running sandboxes' rows for GetSandbox and the data-plane calls;
    /// forgotten on every change to a sandbox (domain::sandboxes::publish).
    running: ShortCache<sandbox::Model>,
    /// Tells the other servers on the same database what changed here.
    peers: crate::peers::Peers,
    /// Failed sign-ins per email (see `auth::throttle`).
    logins: crate::auth::throttle::LoginThrottle,
    /// Browsers watched for a crash, as "sandbox/pid" (domain::browser).
    browser_watches: Mutex<std::collections::HashSet<String>>,
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
        let workers = Arc::new(crate::workers::calls::Remote::new(
            keys.worker_token.clone(),
        ));
        Self::with_workers(db, jwt, config, metrics, keys, workers)
    }

    /// An app whose calls to workers go through `workers` (the domain's
    /// unit tests pass a fake).
    pub fn with_workers(
        db: DatabaseConnection,
        jwt: JwtKeys,
        config: ServerConfig,
        metrics: Metrics,
        keys: Keys,
        workers: Arc<dyn WorkerCalls>,
    ) -> Arc<Self> {
        let Keys {
            secrets_key,
            worker_token: _,
            peer_token,
            preview,
        } = keys;
        let (events, _) = broadcast::channel(1024);
        Arc::new(App {
            audit: crate::audit::AuditLog::start(db.clone()),
            hub: WorkerHub::new(metrics.clone()),
            workers,
            db,
            jwt,
            preview,
            metrics,
            events,
            platform_tenant_id: Arc::new(std::sync::RwLock::new(String::new())),
            secrets_key,
            peer_token,
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

    pub fn db(&self) -> &DatabaseConnection {
        &self.db
    }

    pub fn audit(&self) -> &crate::audit::AuditLog {
        &self.audit
    }

    pub fn jwt(&self) -> &JwtKeys {
        &self.jwt
    }

    pub fn preview(&self) -> &crate::auth::preview::PreviewKeys {
        &self.preview
    }

    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// The sessions of the workers connected to this server: who is
    /// here, what each offers and holds.
    pub fn hub(&self) -> &WorkerHub {
        &self.hub
    }

    /// Every call to a worker goes through here.
    pub fn workers(&self) -> &dyn WorkerCalls {
        self.workers.as_ref()
    }

    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    pub fn events(&self) -> &broadcast::Sender<SandboxEvent> {
        &self.events
    }

    /// The platform tenant's id (set once it exists), shared with the
    /// authenticator.
    pub fn platform_tenant_id(&self) -> &Arc<std::sync::RwLock<String>> {
        &self.platform_tenant_id
    }

    pub fn secrets_key(&self) -> &[u8; 32] {
        &self.secrets_key
    }

    pub fn peer_token(&self) -> &str {
        &self.peer_token
    }

    /// Shared with the authenticator.
    pub fn principals(&self) -> &Arc<ShortCache<crate::auth::Principal>> {
        &self.principals
    }

    pub fn running(&self) -> &ShortCache<sandbox::Model> {
        &self.running
    }

    pub fn peers(&self) -> &crate::peers::Peers {
        &self.peers
    }

    pub fn logins(&self) -> &crate::auth::throttle::LoginThrottle {
        &self.logins
    }

    pub fn browser_watches(&self) -> &Mutex<std::collections::HashSet<String>> {
        &self.browser_watches
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
        let workers = Arc::new(crate::workers::calls::Remote::new("worker-token".into()));
        Self::for_tests_with(workers).await
    }

    /// `for_tests`, with its calls to workers going to `workers`.
    pub async fn for_tests_with(workers: Arc<dyn WorkerCalls>) -> (Arc<App>, tempfile::TempDir) {
        Self::for_tests_configured(workers, |_| {}).await
    }

    /// `for_tests_with`, its configuration changed by `edit`.
    pub async fn for_tests_configured(
        workers: Arc<dyn WorkerCalls>,
        edit: impl FnOnce(&mut ServerConfig),
    ) -> (Arc<App>, tempfile::TempDir) {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut config = ServerConfig::with_defaults(dir.path().to_path_buf());
        config.database_url = crate::db::sqlite_url(dir.path());
        edit(&mut config);
        let db = crate::db::connect(&config.database_url)
            .await
            .expect("database");
        let app = App::with_workers(
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
            workers,
        );
        (app, dir)
    }
}
