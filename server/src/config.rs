//! Server configuration. Every limit is here, with its default, and each is
//! a flag of `talon server` / `talon up` (see main.rs and docs/operations.md).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// For this long after a server starts, while none of its workers is back
/// yet (a restart), a create waits up to `STARTUP_WAIT` for one rather
/// than answer UNAVAILABLE at once.
pub const STARTUP_WINDOW: Duration = Duration::from_secs(60);
pub const STARTUP_WAIT: Duration = Duration::from_secs(15);

#[derive(Clone, Debug)]
pub struct ServerConfig {
    pub data_dir: PathBuf,
    pub grpc_listen: SocketAddr,
    /// This server's gRPC URL as the other servers on its database reach
    /// it (relayed worker commands); None: `http://` + `grpc_listen`, or
    /// this host's name when that is unspecified.
    pub advertise_url: Option<String>,
    /// A worker of this server's own is on its way (`talon up`'s
    /// embedded worker): a create made before it connects waits for it
    /// (up to `STARTUP_WAIT`) rather than answer that no worker is
    /// connected.
    pub expects_worker: bool,
    /// This server's name among those sharing the database
    /// (DATA_DIR/keys/server.id, made once); set at start.
    pub server_id: String,
    pub ops_listen: SocketAddr,
    pub database_url: String,
    pub access_token_ttl: Duration,
    /// How long an authenticated credential is answered without reading
    /// the database again (zero: never); see auth::cache.
    pub auth_cache_ttl: Duration,
    /// How long a running sandbox's record is reused by GetSandbox and the
    /// data-plane calls without reading it again (zero: never); see cache.rs.
    pub sandbox_cache_ttl: Duration,
    pub refresh_token_ttl: Duration,
    /// Lifetime of a browser session (its cookie and its CSRF token).
    pub browser_session_ttl: Duration,
    pub default_quota: Quota,
    pub default_resources: Resources,
    pub max_resources: Resources,
    pub default_sandbox_timeout: Duration,
    pub max_sandbox_timeout: Duration,
    /// The shortest `idle_timeout` a create may ask for.
    pub min_idle_timeout: Duration,
    /// Most bytes of file content one snapshot may hold.
    pub max_snapshot_bytes: i64,
    /// Most bytes of snapshots one tenant may keep.
    pub tenant_snapshot_bytes: i64,
    /// Most snapshots one tenant takes at once (each reserves its bytes).
    pub tenant_concurrent_snapshots: u32,
    /// How long the duties lease (domain::lease) holds without renewal:
    /// with several servers, how long the duties may stop when their
    /// server dies.
    pub duty_lease_ttl: Duration,
    /// How long a worker's lease holds past the heartbeat that renewed it
    /// (the database's clock); a worker whose lease lapses is lost, and
    /// fences itself (stops its sandboxes) at the same time.
    pub worker_lease: Duration,
    /// How long after a worker is found lost its sandboxes are moved.
    pub failover_grace: Duration,
    /// How long a lost worker gets no sandbox placed on it after it
    /// returns, so that a flapping worker causes one wave of moves.
    pub failover_cooldown: Duration,
    /// Most sandboxes the autopilot moves per second.
    pub failover_rate: u32,
    /// What a sandbox that does not choose does when its worker is lost
    /// and its workspace cannot come along.
    pub failover_local: crate::domain::sandboxes::WorkerLoss,
    /// A volume's size when its create names none, and the largest, MiB.
    pub volume_default_mib: i64,
    pub volume_max_mib: i64,
    /// Most volumes a tenant keeps.
    pub volumes_per_tenant: u64,
    pub default_wait_timeout: Duration,
    pub max_wait_timeout: Duration,
    pub worker_command_timeout: Duration,
    pub heartbeat_interval: Duration,
    /// Largest pool PrewarmImage may ask each worker to keep.
    pub max_prewarm_pool_size: i32,
    /// Where users reach the REST gateway; preview links start with it.
    pub public_url: String,
    /// Subdomain previews at `{port}-{sandbox}.DOMAIN`: preview links take
    /// that form (scheme and port from `public_url`). None: path links.
    pub preview_domain: Option<String>,
    /// Browser origins allowed to call gRPC-web (CORS); none by default.
    pub grpc_web_origins: Vec<String>,
    /// How placement counts what a worker holds.
    pub placement: crate::domain::scheduler::Placement,
    /// The platform tenant's quota when bootstrap creates it: the
    /// operator's own, bounded by capacity rather than by a tenant's share.
    pub platform_quota: Quota,
    /// Most of the connected workers' capacity one tenant may hold (0-1];
    /// the platform tenant is not held to it (see `scheduler::over_share`).
    pub tenant_max_share: f64,
    /// Sign-in throttling (see `auth::throttle`).
    pub login_throttle: crate::auth::throttle::ThrottleConfig,
    /// The gRPC listener's connection limits.
    pub grpc_connections: talon_core::listen::Limits,
    /// How fast a request body must arrive until its credential is taken
    /// (see `listener`).
    pub request_bodies: talon_core::listen::BodyLimits,
    /// The ops listener's connection limits (see `ops`).
    pub ops_connections: talon_core::listen::Limits,
}

#[derive(Clone, Copy, Debug)]
pub struct Quota {
    pub max_sandboxes: i64,
    pub max_cpu_millis: i64,
    pub max_memory_mib: i64,
}

#[derive(Clone, Copy, Debug)]
pub struct Resources {
    pub cpu_millis: i64,
    pub memory_mib: i64,
    pub disk_mib: i64,
    pub max_pids: i64,
}

impl ServerConfig {
    pub fn with_defaults(data_dir: PathBuf) -> Self {
        let database_url = crate::db::sqlite_url(&data_dir);
        ServerConfig {
            data_dir,
            grpc_listen: defaults::GRPC_LISTEN.parse().expect("addr"),
            advertise_url: None,
            expects_worker: false,
            server_id: String::new(),
            ops_listen: defaults::OPS_LISTEN.parse().expect("addr"),
            public_url: "http://127.0.0.1:8080".into(),
            preview_domain: None,
            tenant_max_share: defaults::TENANT_MAX_SHARE,
            login_throttle: Default::default(),
            grpc_web_origins: Vec::new(),
            grpc_connections: talon_core::listen::Limits {
                per_peer: 512,
                ..Default::default()
            },
            request_bodies: Default::default(),
            ops_connections: Default::default(),
            database_url,
            access_token_ttl: Duration::from_secs(defaults::ACCESS_TOKEN_TTL_SECS),
            auth_cache_ttl: Duration::from_millis(defaults::AUTH_CACHE_MS),
            sandbox_cache_ttl: Duration::from_millis(defaults::SANDBOX_CACHE_MS),
            refresh_token_ttl: Duration::from_secs(30 * 24 * 3600),
            browser_session_ttl: Duration::from_secs(8 * 3600),
            default_quota: Quota {
                max_sandboxes: 20,
                max_cpu_millis: 16_000,
                max_memory_mib: 32_768,
            },
            placement: crate::domain::scheduler::Placement::Usage {
                cpu_floor_millis: defaults::PLACEMENT_CPU_FLOOR_MILLIS,
                memory_floor_mib: defaults::PLACEMENT_MEMORY_FLOOR_MIB,
            },
            platform_quota: Quota {
                max_sandboxes: 5000,
                max_cpu_millis: 5_000_000,
                max_memory_mib: 5 << 20,
            },
            default_resources: Resources {
                cpu_millis: 1000,
                memory_mib: 512,
                disk_mib: 2048,
                max_pids: 1024,
            },
            max_resources: Resources {
                cpu_millis: 16_000,
                memory_mib: 65_536,
                disk_mib: 102_400,
                max_pids: 65_536,
            },
            default_sandbox_timeout: Duration::from_secs(15 * 60),
            max_sandbox_timeout: Duration::from_secs(24 * 3600),
            min_idle_timeout: Duration::from_secs(defaults::MIN_IDLE_TIMEOUT_SECS),
            max_snapshot_bytes: defaults::MAX_SNAPSHOT_MIB << 20,
            tenant_snapshot_bytes: defaults::TENANT_SNAPSHOT_MIB << 20,
            tenant_concurrent_snapshots: defaults::TENANT_CONCURRENT_SNAPSHOTS,
            duty_lease_ttl: Duration::from_secs(defaults::DUTY_LEASE_SECS),
            worker_lease: Duration::from_secs(defaults::WORKER_LEASE_SECS),
            failover_grace: Duration::from_secs(defaults::FAILOVER_GRACE_SECS),
            failover_cooldown: Duration::from_secs(defaults::FAILOVER_COOLDOWN_SECS),
            failover_rate: defaults::FAILOVER_RATE,
            failover_local: crate::domain::sandboxes::WorkerLoss::Wait,
            volume_default_mib: defaults::VOLUME_DEFAULT_MIB,
            volume_max_mib: defaults::VOLUME_MAX_MIB,
            volumes_per_tenant: defaults::VOLUMES_PER_TENANT,
            default_wait_timeout: Duration::from_secs(60),
            max_wait_timeout: Duration::from_secs(300),
            worker_command_timeout: Duration::from_secs(60),
            heartbeat_interval: Duration::from_secs(defaults::WORKER_HEARTBEAT_SECS),
            max_prewarm_pool_size: defaults::MAX_PREWARM_POOL_SIZE,
        }
    }
}

/// The defaults of the settings that are also flags of `talon server` and
/// `talon up` (talon/src/args.rs): one value for both.
pub mod defaults {
    pub const GRPC_LISTEN: &str = "127.0.0.1:7070";
    pub const OPS_LISTEN: &str = "127.0.0.1:9090";
    pub const ACCESS_TOKEN_TTL_SECS: u64 = 900;
    pub const AUTH_CACHE_MS: u64 = 2000;
    pub const SANDBOX_CACHE_MS: u64 = 2000;
    pub const MIN_IDLE_TIMEOUT_SECS: u64 = 10;
    pub const MAX_SNAPSHOT_MIB: i64 = 10240;
    pub const TENANT_SNAPSHOT_MIB: i64 = 51200;
    pub const TENANT_CONCURRENT_SNAPSHOTS: u32 = 4;
    pub const DUTY_LEASE_SECS: u64 = 10;
    pub const WORKER_HEARTBEAT_SECS: u64 = 5;
    pub const WORKER_LEASE_SECS: u64 = 20;
    pub const FAILOVER_GRACE_SECS: u64 = 10;
    pub const FAILOVER_COOLDOWN_SECS: u64 = 120;
    pub const FAILOVER_LOCAL: &str = "wait";
    pub const FAILOVER_RATE: u32 = 10;
    pub const VOLUME_DEFAULT_MIB: i64 = 1024;
    pub const VOLUME_MAX_MIB: i64 = 64 << 10;
    pub const VOLUMES_PER_TENANT: u64 = 100;
    pub const MAX_PREWARM_POOL_SIZE: i32 = 32;
    pub const LOGIN_MAX_FAILURES: u32 = 5;
    pub const LOGIN_LOCKOUT_SECS: u64 = 30;
    pub const TENANT_MAX_SHARE: f64 = 0.5;
    pub const PLACEMENT: &str = "usage";
    pub const PLACEMENT_CPU_FLOOR_MILLIS: i64 = 10;
    pub const PLACEMENT_MEMORY_FLOOR_MIB: i64 = 32;
}
