//! The command line: every subcommand's flags, and what they make (the
//! server's config, the worker's host options, listener limits).

use clap::{Args, Parser, Subcommand};
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "talon",
    version,
    about = "Talon Sandbox: isolated Linux sandboxes for AI agents"
)]
pub struct Cli {
    /// Log format: text or json.
    #[arg(long, global = true, env = "TALON_LOG_FORMAT", default_value = "text")]
    pub log_format: String,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Control plane and an embedded worker, on the embedded defaults.
    Up(ServerArgs),
    /// The control plane only.
    Server(ServerArgs),
    /// A worker that connects to a control plane.
    Worker(WorkerArgs),
    /// The REST/JSON gateway in front of a control plane.
    Gateway {
        /// The control plane's gRPC URL.
        #[arg(
            long,
            env = "TALON_SERVER_URL",
            default_value = "http://127.0.0.1:7070"
        )]
        server_url: String,
        /// Where the gateway listens.
        #[arg(long, env = "TALON_HTTP_LISTEN", default_value = "127.0.0.1:8080")]
        http_listen: SocketAddr,
        /// Where users reach the gateway; its origin may use browser sessions [default: http://HTTP_LISTEN].
        #[arg(long, env = "TALON_PUBLIC_URL")]
        public_url: Option<String>,
        #[command(flatten)]
        preview: PreviewArgs,
        #[command(flatten)]
        connections: ConnectionArgs,
        #[command(flatten)]
        console: crate::console::ConsoleArgs,
    },
    /// Image archives.
    #[command(subcommand)]
    Image(ImageCommand),
    /// Apply database migrations and exit.
    Migrate {
        #[arg(long, env = "TALON_DATA_DIR")]
        data_dir: Option<PathBuf>,
        #[arg(long, env = "TALON_DATABASE_URL")]
        database_url: Option<String>,
    },
}

use talon_server::config::defaults as d;

#[derive(Args, Clone)]
pub struct ServerArgs {
    /// Data directory [default: /var/lib/talon as root, else $XDG_DATA_HOME/talon or ~/.local/share/talon].
    #[arg(long, env = "TALON_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// gRPC, grpc-web, reflection and health.
    #[arg(long, env = "TALON_GRPC_LISTEN", default_value = d::GRPC_LISTEN)]
    pub grpc_listen: SocketAddr,
    /// With several servers on one database: this server's gRPC URL as the others reach it, to relay commands for the workers whose sessions it holds [default: http:// and --grpc-listen, or this host's name for an unspecified address].
    #[arg(long, env = "TALON_ADVERTISE_URL")]
    pub advertise_url: Option<String>,
    /// Health, readiness and Prometheus metrics.
    #[arg(long, env = "TALON_OPS_LISTEN", default_value = d::OPS_LISTEN)]
    pub ops_listen: SocketAddr,
    /// The REST/JSON gateway [default with `up`: 127.0.0.1:8080; `server` runs none unless given].
    #[arg(long, env = "TALON_HTTP_LISTEN")]
    pub http_listen: Option<SocketAddr>,
    /// Where users reach the REST gateway; preview links start with it [default: http://HTTP_LISTEN].
    #[arg(long, env = "TALON_PUBLIC_URL")]
    pub public_url: Option<String>,
    #[command(flatten)]
    pub e2b: E2bArgs,
    #[command(flatten)]
    pub console: crate::console::ConsoleArgs,
    /// A browser origin (scheme://host:port) allowed to call gRPC-web; repeatable.
    #[arg(
        long = "grpc-web-origin",
        env = "TALON_GRPC_WEB_ORIGINS",
        value_delimiter = ','
    )]
    pub grpc_web_origins: Vec<String>,
    /// sqlite://… (default: DATA_DIR/talon.db) or postgres://…
    #[arg(long, env = "TALON_DATABASE_URL")]
    pub database_url: Option<String>,
    /// Lifetime of access tokens, in seconds.
    #[arg(long, default_value_t = d::ACCESS_TOKEN_TTL_SECS)]
    pub access_token_ttl_secs: u64,
    /// How long an authenticated credential is trusted without reading the
    /// database again, in ms (0: never). Changes on this server apply at once.
    #[arg(long, env = "TALON_AUTH_CACHE_MS", default_value_t = d::AUTH_CACHE_MS)]
    pub auth_cache_ms: u64,
    /// How long a running sandbox's record is reused by GetSandbox and the
    /// process, PTY and file calls without reading it again, in ms (0:
    /// never). Changes on this server apply at once.
    #[arg(long, env = "TALON_SANDBOX_CACHE_MS", default_value_t = d::SANDBOX_CACHE_MS)]
    pub sandbox_cache_ms: u64,
    /// The shortest idle timeout a sandbox may ask for (`Sandbox.idle_timeout`), in seconds.
    #[arg(long, env = "TALON_MIN_IDLE_TIMEOUT_SECS", default_value_t = d::MIN_IDLE_TIMEOUT_SECS, value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub min_idle_timeout_secs: u64,
    /// Most bytes of file content one sandbox snapshot (CreateSnapshot, ForkSandbox) may hold, in MiB.
    #[arg(long, env = "TALON_MAX_SNAPSHOT_MIB", default_value_t = d::MAX_SNAPSHOT_MIB, value_parser = clap::value_parser!(i64).range(1..=1 << 30))]
    pub max_snapshot_mib: i64,
    /// Most bytes of snapshots one tenant may keep, in MiB (a snapshot that would pass it is refused with RESOURCE_EXHAUSTED).
    #[arg(long, env = "TALON_TENANT_SNAPSHOT_MIB", default_value_t = d::TENANT_SNAPSHOT_MIB, value_parser = clap::value_parser!(i64).range(1..=1 << 30))]
    pub tenant_snapshot_mib: i64,
    /// Most snapshots (and forks) one tenant takes at once; each reserves its bytes of the tenant's snapshot quota while it is copied (RESOURCE_EXHAUSTED past it).
    #[arg(long, env = "TALON_TENANT_CONCURRENT_SNAPSHOTS", default_value_t = d::TENANT_CONCURRENT_SNAPSHOTS, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub tenant_concurrent_snapshots: u32,
    /// With several servers on one database: how long the server running the once-per-platform duties (timeouts, secret expiry) holds them without renewing (every second), so how long they may pause when it dies, in seconds.
    #[arg(long, env = "TALON_DUTY_LEASE_SECS", default_value_t = d::DUTY_LEASE_SECS, value_parser = clap::value_parser!(u64).range(3..=300))]
    pub duty_lease_secs: u64,
    /// How often workers send heartbeats, in seconds.
    #[arg(long, env = "TALON_WORKER_HEARTBEAT_SECS", default_value_t = d::WORKER_HEARTBEAT_SECS, value_parser = clap::value_parser!(u64).range(1..=60))]
    pub worker_heartbeat_secs: u64,
    /// How long a worker's lease holds past the heartbeat that renewed it, in seconds (at least three heartbeats). A worker whose lease lapses is marked lost by the autopilot and stops its own sandboxes (fencing).
    #[arg(long, env = "TALON_WORKER_LEASE_SECS", default_value_t = d::WORKER_LEASE_SECS, value_parser = clap::value_parser!(u64).range(3..=3600))]
    pub worker_lease_secs: u64,
    /// How long after a worker is found lost the autopilot moves its sandboxes to other workers, in seconds (at least 1: a stopped worker's fence keeper acts half a second after its lease).
    #[arg(long, env = "TALON_FAILOVER_GRACE_SECS", default_value_t = d::FAILOVER_GRACE_SECS, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub failover_grace_secs: u64,
    /// How long a worker that was lost gets no sandbox placed on it, in seconds: a flapping worker causes one wave of moves.
    #[arg(long, env = "TALON_FAILOVER_COOLDOWN_SECS", default_value_t = d::FAILOVER_COOLDOWN_SECS, value_parser = clap::value_parser!(u64).range(0..=86400))]
    pub failover_cooldown_secs: u64,
    /// What happens to a live sandbox whose worker is lost when its workspace cannot move with it (the `local` backend), for sandboxes that do not choose: `wait` (it runs on where it is, reachable again when its worker is back; nothing is lost) or `move` (its worker stops it and it starts on another worker with an EMPTY workspace).
    #[arg(long, env = "TALON_FAILOVER_LOCAL", default_value = d::FAILOVER_LOCAL, value_parser = ["wait", "move"])]
    pub failover_local: String,
    /// Most sandboxes the autopilot moves per second.
    #[arg(long, env = "TALON_FAILOVER_RATE", default_value_t = d::FAILOVER_RATE, value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub failover_rate: u32,
    /// A volume's size when CreateVolume names none, in MiB.
    #[arg(long, env = "TALON_VOLUME_DEFAULT_MIB", default_value_t = d::VOLUME_DEFAULT_MIB, value_parser = clap::value_parser!(i64).range(16..=16 << 20))]
    pub volume_default_mib: i64,
    /// The largest volume CreateVolume makes, in MiB.
    #[arg(long, env = "TALON_VOLUME_MAX_MIB", default_value_t = d::VOLUME_MAX_MIB, value_parser = clap::value_parser!(i64).range(16..=16 << 20))]
    pub volume_max_mib: i64,
    /// Most volumes one tenant keeps.
    #[arg(long, env = "TALON_VOLUMES_PER_TENANT", default_value_t = d::VOLUMES_PER_TENANT, value_parser = clap::value_parser!(u64).range(0..=100000))]
    pub volumes_per_tenant: u64,
    /// Largest pool size PrewarmImage may ask of each worker.
    #[arg(long, env = "TALON_MAX_PREWARM_POOL_SIZE", default_value_t = d::MAX_PREWARM_POOL_SIZE)]
    pub max_prewarm_pool_size: i32,
    /// Wrong passwords in a row after which an email is locked out of signing in (0: never).
    #[arg(long, env = "TALON_LOGIN_MAX_FAILURES", default_value_t = d::LOGIN_MAX_FAILURES)]
    pub login_max_failures: u32,
    /// The first lockout, in seconds; each further failure doubles it, up to 15 minutes.
    #[arg(long, env = "TALON_LOGIN_LOCKOUT_SECS", default_value_t = d::LOGIN_LOCKOUT_SECS, value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub login_lockout_secs: u64,
    /// Most of the connected workers' cpu, memory and sandbox slots one tenant may hold, over 0 and at most 1 (no cap); the platform tenant is not held to it.
    #[arg(long, env = "TALON_TENANT_MAX_SHARE", default_value_t = d::TENANT_MAX_SHARE, value_parser = parse_share)]
    pub tenant_max_share: f64,
    /// How placement counts a worker's room: `usage` (what its host reports in use, plus a floor for each sandbox placed since its last report) or `limits` (every sandbox at its limits, cpu times the overcommit).
    #[arg(long, env = "TALON_PLACEMENT", default_value = d::PLACEMENT, value_parser = ["usage", "limits"])]
    pub placement: String,
    /// With `usage` placement: the cpu a new or unreported sandbox counts for, in thousandths of a core.
    #[arg(long, env = "TALON_PLACEMENT_CPU_FLOOR_MILLIS", default_value_t = d::PLACEMENT_CPU_FLOOR_MILLIS, value_parser = clap::value_parser!(i64).range(1..))]
    pub placement_cpu_floor_millis: i64,
    /// With `usage` placement: the memory a new or unreported sandbox counts for, in MiB.
    #[arg(long, env = "TALON_PLACEMENT_MEMORY_FLOOR_MIB", default_value_t = d::PLACEMENT_MEMORY_FLOOR_MIB, value_parser = clap::value_parser!(i64).range(1..))]
    pub placement_memory_floor_mib: i64,
    /// Most sandboxes the embedded worker takes (`up` only).
    #[arg(long, default_value_t = 500)]
    pub worker_max_sandboxes: i64,
    /// The embedded worker offers its cores times this as cpu (`up` only).
    #[arg(long, env = "TALON_CPU_OVERCOMMIT", default_value_t = 4.0)]
    pub cpu_overcommit: f64,
    /// Container runtime of the embedded worker: libcontainer, runc, crun or none (`up` only).
    #[arg(long, env = "TALON_RUNTIME", default_value = "libcontainer")]
    pub runtime: String,
    /// The talon-agent binary [default: next to `talon`] (`up` only).
    #[arg(long, env = "TALON_AGENT_PATH")]
    pub agent_path: Option<PathBuf>,
    #[command(flatten)]
    pub host: HostArgs,
    #[command(flatten)]
    pub preview: PreviewArgs,
    #[command(flatten)]
    pub connections: ConnectionArgs,
}

/// Connection and request limits of the listeners clients reach (0: no
/// count limit). Behind a proxy every client has the proxy's address:
/// raise or turn off the per-IP limits there.
#[derive(Args, Clone)]
pub struct ConnectionArgs {
    /// gRPC connections open at once.
    #[arg(long, env = "TALON_GRPC_MAX_CONNECTIONS", default_value_t = 4096)]
    pub grpc_max_connections: usize,
    /// gRPC connections open at once from one IP address.
    #[arg(long, env = "TALON_GRPC_MAX_CONNECTIONS_PER_IP", default_value_t = 512)]
    pub grpc_max_connections_per_ip: usize,
    /// REST gateway connections open at once.
    #[arg(long, env = "TALON_HTTP_MAX_CONNECTIONS", default_value_t = 4096)]
    pub http_max_connections: usize,
    /// REST gateway connections open at once from one IP address.
    #[arg(long, env = "TALON_HTTP_MAX_CONNECTIONS_PER_IP", default_value_t = 256)]
    pub http_max_connections_per_ip: usize,
    /// gRPC connections open at once that have not authenticated; a newcomer past it closes the oldest of them.
    #[arg(
        long,
        env = "TALON_GRPC_MAX_UNAUTHENTICATED_CONNECTIONS",
        default_value_t = 1024
    )]
    pub grpc_max_unauthenticated_connections: usize,
    /// The same for the REST gateway and for each E2B listener.
    #[arg(
        long,
        env = "TALON_HTTP_MAX_UNAUTHENTICATED_CONNECTIONS",
        default_value_t = 1024
    )]
    pub http_max_unauthenticated_connections: usize,
    #[command(flatten)]
    pub times: ConnectionTimes,
    /// A request body must be whole within this time, plus 1 s for every --request-body-min-rate bytes it has brought, in seconds.
    #[arg(long, env = "TALON_REQUEST_BODY_TIMEOUT_SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub request_body_timeout_secs: u64,
    /// Bytes a second a request body must keep up to earn more time (0: none; the timeout is then the whole body's).
    #[arg(long, env = "TALON_REQUEST_BODY_MIN_RATE", default_value_t = 1024)]
    pub request_body_min_rate: u64,
    /// REST: how long a request's headers may take, and an idle keep-alive connection stays, in seconds.
    #[arg(long, env = "TALON_HTTP_HEADER_TIMEOUT_SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub http_header_timeout_secs: u64,
    /// REST: most bytes of one JSON request body (raw uploads are streamed and not bound by it).
    #[arg(long, env = "TALON_HTTP_MAX_JSON_BYTES", default_value_t = 16 << 20, value_parser = clap::value_parser!(u64).range(1024..=1 << 30))]
    pub http_max_json_bytes: u64,
    /// REST: most messages in one JSON client-stream request (an upload or stdin given as JSON).
    #[arg(long, env = "TALON_HTTP_MAX_STREAM_MESSAGES", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub http_max_stream_messages: u64,
}

/// How long a connection may stay silent or idle, on every listener (the
/// worker's data plane too).
#[derive(Args, Clone)]
pub struct ConnectionTimes {
    /// A new connection that sends nothing for this long is closed, in seconds.
    #[arg(long, env = "TALON_CONNECTION_FIRST_BYTE_SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub connection_first_byte_secs: u64,
    /// A connection that has not authenticated and has no request in flight for this long is closed, in seconds.
    #[arg(long, env = "TALON_CONNECTION_IDLE_SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub connection_idle_secs: u64,
    /// HTTP/2: a ping after this long without a frame from the peer, in seconds.
    #[arg(long, env = "TALON_HTTP2_KEEPALIVE_SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub http2_keepalive_secs: u64,
    /// HTTP/2: a connection whose ping is not answered within this time is closed, in seconds.
    #[arg(long, env = "TALON_HTTP2_KEEPALIVE_TIMEOUT_SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub http2_keepalive_timeout_secs: u64,
}

impl ConnectionTimes {
    pub fn limits(
        &self,
        max: usize,
        per_ip: usize,
        unauthenticated: usize,
    ) -> talon_core::listen::Limits {
        use std::time::Duration;
        talon_core::listen::Limits {
            max,
            per_peer: per_ip,
            first_byte: Duration::from_secs(self.connection_first_byte_secs),
            unauthenticated,
            idle: Duration::from_secs(self.connection_idle_secs),
            keepalive: Duration::from_secs(self.http2_keepalive_secs),
            keepalive_timeout: Duration::from_secs(self.http2_keepalive_timeout_secs),
        }
    }
}

/// The worker data plane's connection counts (`talon worker`; `up`'s
/// embedded worker listens on loopback with the defaults).
#[derive(Args, Clone)]
pub struct DataPlaneArgs {
    /// Data-plane connections open at once (servers' and others').
    #[arg(long, env = "TALON_DATA_MAX_CONNECTIONS", default_value_t = DataPlaneArgs::MAX)]
    pub data_max_connections: usize,
    /// Data-plane connections open at once that have not presented the worker token; a newcomer past it closes the oldest of them.
    #[arg(long, env = "TALON_DATA_MAX_UNAUTHENTICATED_CONNECTIONS", default_value_t = DataPlaneArgs::UNAUTHENTICATED)]
    pub data_max_unauthenticated_connections: usize,
}

impl DataPlaneArgs {
    const MAX: usize = 4096;
    const UNAUTHENTICATED: usize = 64;

    /// No per-address limit: the servers are few and may open many.
    pub fn limits(&self, times: &ConnectionTimes) -> talon_core::listen::Limits {
        times.limits(
            self.data_max_connections,
            0,
            self.data_max_unauthenticated_connections,
        )
    }

    /// `up`'s embedded worker: the defaults.
    pub fn embedded(times: &ConnectionTimes) -> talon_core::listen::Limits {
        times.limits(Self::MAX, 0, Self::UNAUTHENTICATED)
    }
}

impl ConnectionArgs {
    pub fn grpc(&self) -> talon_core::listen::Limits {
        self.times.limits(
            self.grpc_max_connections,
            self.grpc_max_connections_per_ip,
            self.grpc_max_unauthenticated_connections,
        )
    }
    pub fn http(&self) -> talon_core::listen::Limits {
        self.times.limits(
            self.http_max_connections,
            self.http_max_connections_per_ip,
            self.http_max_unauthenticated_connections,
        )
    }
    pub fn bodies(&self) -> talon_core::listen::BodyLimits {
        talon_core::listen::BodyLimits {
            timeout: std::time::Duration::from_secs(self.request_body_timeout_secs),
            min_rate: self.request_body_min_rate,
        }
    }
}

pub fn parse_share(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 1.0 => Ok(v),
        _ => Err(format!("{s:?} is not a share over 0 and at most 1")),
    }
}

/// How the gateway serves previews.
#[derive(Args, Clone)]
pub struct PreviewArgs {
    /// Subdomain previews at {port}-{sandbox}.DOMAIN (a wildcard DNS name pointing at the gateway), and preview links in that form. Default: `localhost` when the public URL is on loopback (browsers resolve *.localhost there), else none; `none` turns them off. Path previews (/preview/{sandbox}/{port}/, in an opaque origin in browsers) are always served.
    #[arg(long, env = "TALON_PREVIEW_DOMAIN")]
    pub preview_domain: Option<String>,
    /// Users reach the gateway over HTTPS (a TLS proxy in front): previews are told so in X-Forwarded-Proto.
    #[arg(long, env = "TALON_PUBLIC_HTTPS")]
    pub public_https: bool,
}

impl PreviewArgs {
    /// The preview domain in effect for a gateway reached at `public_url`.
    pub fn domain(&self, public_url: &str) -> Option<String> {
        match self.preview_domain.as_deref().map(|d| d.trim_matches('.')) {
            Some("none") | Some("") => None,
            Some(d) => Some(d.to_ascii_lowercase()),
            None => {
                let host = public_url
                    .parse::<http::Uri>()
                    .ok()
                    .and_then(|u| u.host().map(|h| h.trim_matches(['[', ']']).to_string()))?;
                let loopback = host.eq_ignore_ascii_case("localhost")
                    || host
                        .parse::<std::net::IpAddr>()
                        .is_ok_and(|ip| ip.is_loopback());
                loopback.then(|| "localhost".to_string())
            }
        }
    }
}

/// How a worker builds sandboxes.
#[derive(Args, Clone)]
pub struct HostArgs {
    /// Most bytes a second of process output (logs, PTY) one sandbox's streams carry to clients; the host copies every byte outside the sandbox's cgroup (0: no limit).
    #[arg(long, env = "TALON_SANDBOX_OUTPUT_BYTES_PER_SEC", default_value_t = 16 << 20)]
    pub sandbox_output_bytes_per_sec: u64,
    /// Root filesystem of imported images: overlay (writable, copy-on-write) or hardlink (read-only).
    #[arg(long, env = "TALON_ROOTFS", default_value = "overlay")]
    pub rootfs: talon_worker::rootfs::RootfsMode,
    /// Most bytes an imported image may unpack to (and an uploaded archive may have).
    #[arg(long, env = "TALON_MAX_IMAGE_BYTES", default_value_t = 32 << 30)]
    pub max_image_bytes: u64,
    /// Sandbox networking: bridge (a veth per sandbox, NAT, egress policies in nftables) or none (lo only).
    #[arg(long, env = "TALON_NETWORK", default_value = "bridge", value_parser = ["bridge", "none"])]
    pub network: String,
    /// The sandbox bridge, also the name of the worker's nftables tables (at most 8 characters).
    #[arg(long, env = "TALON_BRIDGE", default_value = "talon0")]
    pub bridge: String,
    /// The sandbox address pool; its first address is the gateway and the sandboxes' DNS server.
    #[arg(long, env = "TALON_SANDBOX_CIDR", default_value = "10.88.0.0/16")]
    pub sandbox_cidr: ipnet::Ipv4Net,
    /// Where the sandbox resolver forwards (IP or IP:PORT) [default: the host's first nameserver].
    #[arg(long, env = "TALON_DNS_UPSTREAM")]
    pub dns_upstream: Option<String>,
    /// Destinations no sandbox may reach, besides the built-in list and the server's addresses; repeatable.
    #[arg(long = "egress-deny", env = "TALON_EGRESS_DENY", value_delimiter = ',')]
    pub egress_deny: Vec<ipnet::IpNet>,
    /// The shortest time an allowlisted name's resolved address stays allowed, in seconds.
    #[arg(long, env = "TALON_DNS_PIN_MIN_TTL_SECS", default_value_t = 60)]
    pub dns_pin_min_ttl_secs: u64,
    /// Prewarmed sandboxes kept ready per image and resource shape; 0 turns the pool off.
    #[arg(long, env = "TALON_PREWARM_POOL_SIZE", default_value_t = 2)]
    pub prewarm_pool_size: usize,
    /// Image and resource shapes pooled at once (least recently used give way).
    #[arg(long, env = "TALON_PREWARM_MAX_POOLS", default_value_t = 4)]
    pub prewarm_max_pools: usize,
    /// Least time between two pooled builds, in milliseconds.
    #[arg(long, env = "TALON_PREWARM_REFILL_MS", default_value_t = 200)]
    pub prewarm_refill_ms: u64,
    /// A pool no create has used for this long is emptied, in seconds.
    #[arg(long, env = "TALON_PREWARM_IDLE_SECS", default_value_t = 600)]
    pub prewarm_idle_secs: u64,
    /// A sandbox's disk (every path it writes) has one inode per this many bytes.
    #[arg(long, env = "TALON_DISK_BYTES_PER_INODE", default_value_t = 16384, value_parser = clap::value_parser!(u64).range(1024..=1 << 26))]
    pub disk_bytes_per_inode: u64,
    /// The smallest sandbox disk made, in MiB (a smaller diskMib gets this).
    #[arg(long, env = "TALON_DISK_MIN_MIB", default_value_t = 64, value_parser = clap::value_parser!(u64).range(16..))]
    pub disk_min_mib: u64,
    /// How long a stop, a fence or a start waits, in seconds, for a sandbox's disk to be let go by every mount namespace that still holds a copy of its mount (a container being set up elsewhere holds one briefly); past it the start is refused rather than mount the disk twice.
    #[arg(long, env = "TALON_DISK_RELEASE_WAIT_SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub disk_release_wait_secs: u64,
    /// A process's output log rotates past this many bytes, keeping the last file too (about twice this per process; a reconnect replays what is kept).
    #[arg(long, env = "TALON_PROCESS_LOG_BYTES", default_value_t = 8 << 20, value_parser = clap::value_parser!(u64).range(4096..=1 << 30))]
    pub process_log_bytes: u64,
    /// Most bytes of a process's older log files kept for a live output stream that has not read them yet, beyond the two files; past it the process waits for the stream (back-pressure), so a slow reader gets every byte. On the sandbox's disk.
    #[arg(long, env = "TALON_PROCESS_SPILL_BYTES", default_value_t = 32 << 20, value_parser = clap::value_parser!(u64).range(0..=1 << 36))]
    pub process_spill_bytes: u64,
    /// Most code contexts (kernels) one sandbox may have at once.
    #[arg(long, env = "TALON_MAX_CODE_CONTEXTS", default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub max_code_contexts: u32,
    /// How often the worker reports every sandbox it holds, so that those the control plane no longer knows are removed, in seconds.
    #[arg(long, env = "TALON_RECONCILE_SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub reconcile_secs: u64,
    /// The `shared` workspace backend: a directory every worker of the platform mounts from shared storage (NFS, CephFS, JuiceFS...), where sandbox disks live so that a sandbox moved off a lost worker keeps its files. Unset: disks live under the data directory (`local`).
    #[arg(long, env = "TALON_SHARED_WORKSPACES")]
    pub shared_workspaces: Option<std::path::PathBuf>,
    /// The cgroup this worker's sandboxes are under, in every hierarchy: give each worker its own when several run on one machine.
    #[arg(long, env = "TALON_CGROUP_PARENT", default_value = "talon")]
    pub cgroup_parent: String,
    /// gVisor's runsc, for the `gvisor` isolation level: a path, `auto` (runsc on PATH, else /usr/local/lib/talon-gvisor/runsc from scripts/install-runsc.sh) or `none`. The level is offered only when it runs a sandbox at start.
    #[arg(long, env = "TALON_RUNSC", default_value = "auto")]
    pub runsc: String,
    /// The platform runsc intercepts system calls with: systrap, ptrace or kvm (kvm needs /dev/kvm and hangs under nested virtualization).
    #[arg(long, env = "TALON_GVISOR_PLATFORM", default_value = "systrap", value_parser = ["systrap", "ptrace", "kvm"])]
    pub gvisor_platform: String,
}

impl HostArgs {
    pub fn gvisor(&self) -> talon_worker::GvisorConfig {
        talon_worker::GvisorConfig {
            runsc: self.runsc.clone(),
            platform: self.gvisor_platform.clone(),
        }
    }

    pub fn options(&self) -> anyhow::Result<talon_worker::host::HostOptions> {
        let network = if self.network == "none" {
            None
        } else {
            let dns_upstream = match &self.dns_upstream {
                None => None,
                Some(u) => Some(match u.parse::<SocketAddr>() {
                    Ok(a) => a,
                    Err(_) => SocketAddr::new(
                        u.parse().map_err(|_| {
                            anyhow::anyhow!("--dns-upstream {u:?}: not an IP or IP:PORT")
                        })?,
                        53,
                    ),
                }),
            };
            Some(talon_worker::net::NetOptions {
                bridge: self.bridge.clone(),
                cidr: self.sandbox_cidr,
                dns_upstream,
                deny: self.egress_deny.clone(),
                pin_floor: std::time::Duration::from_secs(self.dns_pin_min_ttl_secs),
                mtu: None,
            })
        };
        Ok(talon_worker::host::HostOptions {
            rootfs_mode: self.rootfs,
            max_image_bytes: self.max_image_bytes,
            network,
            pool: talon_worker::pool::PoolOptions {
                size: self.prewarm_pool_size,
                max_pools: self.prewarm_max_pools,
                refill_interval: std::time::Duration::from_millis(self.prewarm_refill_ms),
                idle: std::time::Duration::from_secs(self.prewarm_idle_secs),
            },
            disk: talon_worker::disk::DiskOptions {
                min_mib: self.disk_min_mib,
                bytes_per_inode: self.disk_bytes_per_inode,
                release_wait: std::time::Duration::from_secs(self.disk_release_wait_secs),
                ..Default::default()
            },
            agent: talon_worker::bundle::AgentOptions {
                max_log_bytes: self.process_log_bytes,
                max_spill_bytes: self.process_spill_bytes,
                max_code_contexts: self.max_code_contexts,
            },
            shared_disks: self.shared_workspaces.clone(),
            cgroup_parent: self.cgroup_parent.clone(),
        })
    }
}

#[derive(Args)]
pub struct WorkerArgs {
    /// The control plane's gRPC URL; or several, comma-separated, of servers on one database: the worker keeps one session and moves to the next server when it ends.
    #[arg(
        long,
        env = "TALON_SERVER_URL",
        default_value = "http://127.0.0.1:7070"
    )]
    pub server_url: String,
    /// File holding the worker token (the server's DATA_DIR/keys/worker.token).
    #[arg(long, env = "TALON_WORKER_TOKEN_FILE")]
    pub token_file: PathBuf,
    /// The worker's data directory.
    #[arg(long, env = "TALON_WORKER_DATA_DIR")]
    pub data_dir: PathBuf,
    /// Most sandboxes this worker takes.
    #[arg(long, default_value_t = 500)]
    pub max_sandboxes: i64,
    /// Offer the host's cores times this as cpu (cpu limits are time shares).
    #[arg(long, env = "TALON_CPU_OVERCOMMIT", default_value_t = 4.0)]
    pub cpu_overcommit: f64,
    /// Container runtime: libcontainer, runc, crun or none.
    #[arg(long, env = "TALON_RUNTIME", default_value = "libcontainer")]
    pub runtime: String,
    /// The talon-agent binary [default: next to `talon`].
    #[arg(long, env = "TALON_AGENT_PATH")]
    pub agent_path: Option<PathBuf>,
    /// Where the data plane listens; the server must reach it.
    #[arg(long, env = "TALON_DATA_LISTEN", default_value = "127.0.0.1:7071")]
    pub data_listen: SocketAddr,
    #[command(flatten)]
    pub data_plane: DataPlaneArgs,
    #[command(flatten)]
    pub times: ConnectionTimes,
    #[command(flatten)]
    pub host: HostArgs,
}

#[derive(Subcommand)]
pub enum ImageCommand {
    /// Packs a root filesystem directory (a debootstrap tree, say) into a
    /// one-layer image archive for ImportImage.
    Pack {
        /// The directory to pack.
        #[arg(long)]
        rootfs: PathBuf,
        /// The archive to write.
        #[arg(long)]
        output: PathBuf,
        /// oci (an OCI image layout, gzip layer) or docker (`docker save`).
        #[arg(long, default_value = "oci")]
        format: talon_worker::image::pack::Format,
        /// The reference recorded in the archive, e.g. debian:bookworm.
        #[arg(long, default_value = "")]
        reference: String,
        /// KEY=VALUE for the image's environment; repeatable.
        #[arg(long = "env")]
        env: Vec<String>,
        /// The image's working directory.
        #[arg(long, default_value = "")]
        working_dir: String,
    },
}

pub fn default_data_dir() -> PathBuf {
    // Root runs the platform as a system service; its sandboxes' mapped
    // users must be able to traverse the path, which /root forbids.
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return PathBuf::from("/var/lib/talon");
    }
    if let Some(x) = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(x).join("talon");
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/lib"));
    home.join(".local/share/talon")
}

/// The E2B-compatible API.
#[derive(clap::Args, Clone, Debug)]
pub struct E2bArgs {
    /// E2B's control plane (point E2B_API_URL here), or "off" [default with `up`: 127.0.0.1:8081; `server` runs none unless given].
    #[arg(long, env = "TALON_E2B_API_LISTEN")]
    pub e2b_api_listen: Option<String>,
    /// E2B's sandbox data plane, envd (point E2B_SANDBOX_URL here), or "off" [default with `up`: 127.0.0.1:8082; `server` runs none unless given]. Needs the control plane.
    #[arg(long, env = "TALON_E2B_SANDBOX_LISTEN")]
    pub e2b_sandbox_listen: Option<String>,
    /// The domain of host-name routing (`{port}-{id}.{domain}` on the sandbox listener), reported to the SDKs as the sandboxes' `domain`.
    #[arg(long, env = "TALON_E2B_DOMAIN")]
    pub e2b_domain: Option<String>,
    /// A PEM certificate chain: both E2B listeners serve TLS with it (a wildcard certificate for `*.{domain}` with host routing).
    #[arg(long, env = "TALON_E2B_TLS_CERT", requires = "e2b_tls_key")]
    pub e2b_tls_cert: Option<PathBuf>,
    /// The PEM private key of `--e2b-tls-cert`.
    #[arg(long, env = "TALON_E2B_TLS_KEY", requires = "e2b_tls_cert")]
    pub e2b_tls_key: Option<PathBuf>,
    /// The image E2B's default template, `base`, stands for.
    #[arg(long, env = "TALON_E2B_DEFAULT_TEMPLATE", default_value = "host")]
    pub e2b_default_template: String,
    /// The most sandboxes one page of `GET /v2/sandboxes` holds (and its default `limit`).
    #[arg(long, default_value_t = 100)]
    pub e2b_max_list_limit: i32,
    /// The most polling file watchers (sync Python's `watch_dir`) open at once.
    #[arg(long, default_value_t = 1024)]
    pub e2b_max_watchers: usize,
    /// The most polling watchers one tenant's sandboxes hold at once.
    #[arg(long, default_value_t = 64, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub e2b_watchers_per_tenant: usize,
    /// The most polling watchers one sandbox holds at once.
    #[arg(long, default_value_t = 16, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub e2b_watchers_per_sandbox: usize,
    /// The most unread events one polling watcher keeps (older ones go).
    #[arg(long, default_value_t = 10_000)]
    pub e2b_watcher_max_events: usize,
    /// The most KiB of unread events one polling watcher keeps (older ones go).
    #[arg(long, default_value_t = 256, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1 << 20))]
    pub e2b_watcher_max_kib: usize,
    /// A polling watcher not polled for this long is removed.
    #[arg(long, default_value_t = 600)]
    pub e2b_watcher_idle_secs: u64,
}

impl E2bArgs {
    /// Where the E2B API listens; None when it is off.
    pub fn api_listen(&self, embedded: bool) -> anyhow::Result<Option<SocketAddr>> {
        listen_or_off(
            "--e2b-api-listen",
            self.e2b_api_listen.as_deref(),
            embedded,
            "127.0.0.1:8081",
        )
    }

    /// Where E2B's sandbox data plane listens; None when it is off.
    pub fn sandbox_listen(&self, embedded: bool) -> anyhow::Result<Option<SocketAddr>> {
        listen_or_off(
            "--e2b-sandbox-listen",
            self.e2b_sandbox_listen.as_deref(),
            embedded,
            "127.0.0.1:8082",
        )
    }
}

fn listen_or_off(
    flag: &str,
    value: Option<&str>,
    embedded: bool,
    default: &str,
) -> anyhow::Result<Option<SocketAddr>> {
    match value {
        Some("off") => Ok(None),
        Some(a) => Ok(Some(a.parse().map_err(|_| {
            anyhow::anyhow!("{flag} {a:?} is not an address or \"off\"")
        })?)),
        None => Ok(embedded.then(|| default.parse().expect("addr"))),
    }
}
