//! `talon`: `up` (control plane + embedded worker in one process), `server`,
//! `worker` and `migrate`.

use clap::{Args, Parser, Subcommand};
use std::net::SocketAddr;
use std::path::PathBuf;
use talon_server::config::ServerConfig;

#[derive(Parser)]
#[command(
    name = "talon",
    version,
    about = "Talon Sandbox: isolated Linux sandboxes for AI agents"
)]
struct Cli {
    /// Log format: text or json.
    #[arg(long, global = true, env = "TALON_LOG_FORMAT", default_value = "text")]
    log_format: String,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
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

#[derive(Args, Clone)]
struct ServerArgs {
    /// Data directory [default: /var/lib/talon as root, else $XDG_DATA_HOME/talon or ~/.local/share/talon].
    #[arg(long, env = "TALON_DATA_DIR")]
    data_dir: Option<PathBuf>,
    /// gRPC, grpc-web, reflection and health.
    #[arg(long, env = "TALON_GRPC_LISTEN", default_value = "127.0.0.1:7070")]
    grpc_listen: SocketAddr,
    /// Health, readiness and Prometheus metrics.
    #[arg(long, env = "TALON_OPS_LISTEN", default_value = "127.0.0.1:9090")]
    ops_listen: SocketAddr,
    /// The REST/JSON gateway [default with `up`: 127.0.0.1:8080; `server` runs none unless given].
    #[arg(long, env = "TALON_HTTP_LISTEN")]
    http_listen: Option<SocketAddr>,
    /// Where users reach the REST gateway; preview links start with it [default: http://HTTP_LISTEN].
    #[arg(long, env = "TALON_PUBLIC_URL")]
    public_url: Option<String>,
    /// A browser origin (scheme://host:port) allowed to call gRPC-web; repeatable.
    #[arg(
        long = "grpc-web-origin",
        env = "TALON_GRPC_WEB_ORIGINS",
        value_delimiter = ','
    )]
    grpc_web_origins: Vec<String>,
    /// sqlite://… (default: DATA_DIR/talon.db) or postgres://…
    #[arg(long, env = "TALON_DATABASE_URL")]
    database_url: Option<String>,
    /// Lifetime of access tokens, in seconds.
    #[arg(long, default_value_t = 900)]
    access_token_ttl_secs: u64,
    /// How long an authenticated credential is trusted without reading the
    /// database again, in ms (0: never). Changes on this server apply at once.
    #[arg(long, env = "TALON_AUTH_CACHE_MS", default_value_t = 2000)]
    auth_cache_ms: u64,
    /// How long a running sandbox's record is reused by GetSandbox and the
    /// process, PTY and file calls without reading it again, in ms (0:
    /// never). Changes on this server apply at once.
    #[arg(long, env = "TALON_SANDBOX_CACHE_MS", default_value_t = 2000)]
    sandbox_cache_ms: u64,
    /// Largest pool size PrewarmImage may ask of each worker.
    #[arg(long, env = "TALON_MAX_PREWARM_POOL_SIZE", default_value_t = 32)]
    max_prewarm_pool_size: i32,
    /// Wrong passwords in a row after which an email is locked out of signing in (0: never).
    #[arg(long, env = "TALON_LOGIN_MAX_FAILURES", default_value_t = 5)]
    login_max_failures: u32,
    /// The first lockout, in seconds; each further failure doubles it, up to 15 minutes.
    #[arg(long, env = "TALON_LOGIN_LOCKOUT_SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=86400))]
    login_lockout_secs: u64,
    /// Most of the connected workers' cpu, memory and sandbox slots one tenant may hold, over 0 and at most 1 (no cap); the platform tenant is not held to it.
    #[arg(long, env = "TALON_TENANT_MAX_SHARE", default_value_t = 0.5, value_parser = parse_share)]
    tenant_max_share: f64,
    /// Most sandboxes the embedded worker takes (`up` only).
    #[arg(long, default_value_t = 500)]
    worker_max_sandboxes: i64,
    /// The embedded worker offers its cores times this as cpu (`up` only).
    #[arg(long, env = "TALON_CPU_OVERCOMMIT", default_value_t = 4.0)]
    cpu_overcommit: f64,
    /// Container runtime of the embedded worker: libcontainer, runc, crun or none (`up` only).
    #[arg(long, env = "TALON_RUNTIME", default_value = "libcontainer")]
    runtime: String,
    /// The talon-agent binary [default: next to `talon`] (`up` only).
    #[arg(long, env = "TALON_AGENT_PATH")]
    agent_path: Option<PathBuf>,
    #[command(flatten)]
    host: HostArgs,
    #[command(flatten)]
    preview: PreviewArgs,
    #[command(flatten)]
    connections: ConnectionArgs,
}

/// Connection and request limits of the listeners clients reach (0: no
/// count limit). Behind a proxy every client has the proxy's address:
/// raise or turn off the per-IP limits there.
#[derive(Args, Clone)]
struct ConnectionArgs {
    /// gRPC connections open at once.
    #[arg(long, env = "TALON_GRPC_MAX_CONNECTIONS", default_value_t = 4096)]
    grpc_max_connections: usize,
    /// gRPC connections open at once from one IP address.
    #[arg(long, env = "TALON_GRPC_MAX_CONNECTIONS_PER_IP", default_value_t = 512)]
    grpc_max_connections_per_ip: usize,
    /// REST gateway connections open at once.
    #[arg(long, env = "TALON_HTTP_MAX_CONNECTIONS", default_value_t = 4096)]
    http_max_connections: usize,
    /// REST gateway connections open at once from one IP address.
    #[arg(long, env = "TALON_HTTP_MAX_CONNECTIONS_PER_IP", default_value_t = 256)]
    http_max_connections_per_ip: usize,
    /// A new connection that sends nothing for this long is closed, in seconds.
    #[arg(long, env = "TALON_CONNECTION_FIRST_BYTE_SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    connection_first_byte_secs: u64,
    /// REST: how long a request's headers may take, and an idle keep-alive connection stays, in seconds.
    #[arg(long, env = "TALON_HTTP_HEADER_TIMEOUT_SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    http_header_timeout_secs: u64,
    /// REST: most bytes of one JSON request body (raw uploads are streamed and not bound by it).
    #[arg(long, env = "TALON_HTTP_MAX_JSON_BYTES", default_value_t = 16 << 20, value_parser = clap::value_parser!(u64).range(1024..=1 << 30))]
    http_max_json_bytes: u64,
    /// REST: most messages in one JSON client-stream request (an upload or stdin given as JSON).
    #[arg(long, env = "TALON_HTTP_MAX_STREAM_MESSAGES", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    http_max_stream_messages: u64,
}

impl ConnectionArgs {
    fn limits(&self, max: usize, per_ip: usize) -> talon_core::listen::Limits {
        talon_core::listen::Limits {
            max,
            per_peer: per_ip,
            first_byte: std::time::Duration::from_secs(self.connection_first_byte_secs),
        }
    }
    fn grpc(&self) -> talon_core::listen::Limits {
        self.limits(self.grpc_max_connections, self.grpc_max_connections_per_ip)
    }
    fn http(&self) -> talon_core::listen::Limits {
        self.limits(self.http_max_connections, self.http_max_connections_per_ip)
    }
}

fn parse_share(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 1.0 => Ok(v),
        _ => Err(format!("{s:?} is not a share over 0 and at most 1")),
    }
}

/// `scheme://host[:port]` of a URL, as browsers send it in `Origin`.
fn origin_of(url: &str) -> String {
    match url.parse::<http::Uri>() {
        Ok(u) => format!(
            "{}://{}",
            u.scheme_str().unwrap_or("http"),
            u.authority().map(|a| a.as_str()).unwrap_or("")
        ),
        Err(_) => url.trim_end_matches('/').to_string(),
    }
}

/// How the gateway serves previews.
#[derive(Args, Clone)]
struct PreviewArgs {
    /// Subdomain previews at {port}-{sandbox}.DOMAIN (a wildcard DNS name pointing at the gateway), and preview links in that form. Default: `localhost` when the public URL is on loopback (browsers resolve *.localhost there), else none; `none` turns them off. Path previews (/preview/{sandbox}/{port}/, in an opaque origin in browsers) are always served.
    #[arg(long, env = "TALON_PREVIEW_DOMAIN")]
    preview_domain: Option<String>,
    /// Users reach the gateway over HTTPS (a TLS proxy in front): previews are told so in X-Forwarded-Proto.
    #[arg(long, env = "TALON_PUBLIC_HTTPS")]
    public_https: bool,
}

impl PreviewArgs {
    /// The preview domain in effect for a gateway reached at `public_url`.
    fn domain(&self, public_url: &str) -> Option<String> {
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
struct HostArgs {
    /// Most bytes a second of process output (logs, PTY) one sandbox's streams carry to clients; the host copies every byte outside the sandbox's cgroup (0: no limit).
    #[arg(long, env = "TALON_SANDBOX_OUTPUT_BYTES_PER_SEC", default_value_t = 16 << 20)]
    sandbox_output_bytes_per_sec: u64,
    /// Root filesystem of imported images: overlay (writable, copy-on-write) or hardlink (read-only).
    #[arg(long, env = "TALON_ROOTFS", default_value = "overlay")]
    rootfs: talon_worker::rootfs::RootfsMode,
    /// Most bytes an imported image may unpack to (and an uploaded archive may have).
    #[arg(long, env = "TALON_MAX_IMAGE_BYTES", default_value_t = 32 << 30)]
    max_image_bytes: u64,
    /// Sandbox networking: bridge (a veth per sandbox, NAT, egress policies in nftables) or none (lo only).
    #[arg(long, env = "TALON_NETWORK", default_value = "bridge", value_parser = ["bridge", "none"])]
    network: String,
    /// The sandbox bridge, also the name of the worker's nftables tables (at most 8 characters).
    #[arg(long, env = "TALON_BRIDGE", default_value = "talon0")]
    bridge: String,
    /// The sandbox address pool; its first address is the gateway and the sandboxes' DNS server.
    #[arg(long, env = "TALON_SANDBOX_CIDR", default_value = "10.88.0.0/16")]
    sandbox_cidr: ipnet::Ipv4Net,
    /// Where the sandbox resolver forwards (IP or IP:PORT) [default: the host's first nameserver].
    #[arg(long, env = "TALON_DNS_UPSTREAM")]
    dns_upstream: Option<String>,
    /// Destinations no sandbox may reach, besides the built-in list and the server's addresses; repeatable.
    #[arg(long = "egress-deny", env = "TALON_EGRESS_DENY", value_delimiter = ',')]
    egress_deny: Vec<ipnet::IpNet>,
    /// The shortest time an allowlisted name's resolved address stays allowed, in seconds.
    #[arg(long, env = "TALON_DNS_PIN_MIN_TTL_SECS", default_value_t = 60)]
    dns_pin_min_ttl_secs: u64,
    /// Prewarmed sandboxes kept ready per image and resource shape; 0 turns the pool off.
    #[arg(long, env = "TALON_PREWARM_POOL_SIZE", default_value_t = 2)]
    prewarm_pool_size: usize,
    /// Image and resource shapes pooled at once (least recently used give way).
    #[arg(long, env = "TALON_PREWARM_MAX_POOLS", default_value_t = 4)]
    prewarm_max_pools: usize,
    /// Least time between two pooled builds, in milliseconds.
    #[arg(long, env = "TALON_PREWARM_REFILL_MS", default_value_t = 200)]
    prewarm_refill_ms: u64,
    /// A pool no create has used for this long is emptied, in seconds.
    #[arg(long, env = "TALON_PREWARM_IDLE_SECS", default_value_t = 600)]
    prewarm_idle_secs: u64,
    /// A sandbox's disk (every path it writes) has one inode per this many bytes.
    #[arg(long, env = "TALON_DISK_BYTES_PER_INODE", default_value_t = 16384, value_parser = clap::value_parser!(u64).range(1024..=1 << 26))]
    disk_bytes_per_inode: u64,
    /// The smallest sandbox disk made, in MiB (a smaller diskMib gets this).
    #[arg(long, env = "TALON_DISK_MIN_MIB", default_value_t = 64, value_parser = clap::value_parser!(u64).range(16..))]
    disk_min_mib: u64,
    /// How often the worker reports every sandbox it holds, so that those the control plane no longer knows are removed, in seconds.
    #[arg(long, env = "TALON_RECONCILE_SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    reconcile_secs: u64,
}

impl HostArgs {
    fn options(&self) -> anyhow::Result<talon_worker::host::HostOptions> {
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
                ..Default::default()
            },
        })
    }
}

#[derive(Args)]
struct WorkerArgs {
    /// The control plane's gRPC URL.
    #[arg(
        long,
        env = "TALON_SERVER_URL",
        default_value = "http://127.0.0.1:7070"
    )]
    server_url: String,
    /// File holding the worker token (the server's DATA_DIR/keys/worker.token).
    #[arg(long, env = "TALON_WORKER_TOKEN_FILE")]
    token_file: PathBuf,
    /// The worker's data directory.
    #[arg(long, env = "TALON_WORKER_DATA_DIR")]
    data_dir: PathBuf,
    /// Most sandboxes this worker takes.
    #[arg(long, default_value_t = 500)]
    max_sandboxes: i64,
    /// Offer the host's cores times this as cpu (cpu limits are time shares).
    #[arg(long, env = "TALON_CPU_OVERCOMMIT", default_value_t = 4.0)]
    cpu_overcommit: f64,
    /// Container runtime: libcontainer, runc, crun or none.
    #[arg(long, env = "TALON_RUNTIME", default_value = "libcontainer")]
    runtime: String,
    /// The talon-agent binary [default: next to `talon`].
    #[arg(long, env = "TALON_AGENT_PATH")]
    agent_path: Option<PathBuf>,
    /// Where the data plane listens; the server must reach it.
    #[arg(long, env = "TALON_DATA_LISTEN", default_value = "127.0.0.1:7071")]
    data_listen: SocketAddr,
    #[command(flatten)]
    host: HostArgs,
}

#[derive(Subcommand)]
enum ImageCommand {
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

fn default_data_dir() -> PathBuf {
    // Root runs the platform as a system service; its sandboxes' mapped
    // users must be able to traverse the path, which /root forbids.
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

fn server_config(a: &ServerArgs) -> ServerConfig {
    let data_dir = a.data_dir.clone().unwrap_or_else(default_data_dir);
    let mut c = ServerConfig::with_defaults(data_dir);
    c.grpc_listen = a.grpc_listen;
    c.ops_listen = a.ops_listen;
    if let Some(u) = &a.database_url {
        c.database_url = u.clone();
    }
    c.access_token_ttl = std::time::Duration::from_secs(a.access_token_ttl_secs);
    c.auth_cache_ttl = std::time::Duration::from_millis(a.auth_cache_ms);
    c.sandbox_cache_ttl = std::time::Duration::from_millis(a.sandbox_cache_ms);
    c.grpc_web_origins = a.grpc_web_origins.clone();
    c.grpc_connections = a.connections.grpc();
    c.max_prewarm_pool_size = a.max_prewarm_pool_size;
    c.tenant_max_share = a.tenant_max_share;
    c.login_throttle.max_failures = a.login_max_failures;
    c.login_throttle.lockout = std::time::Duration::from_secs(a.login_lockout_secs);
    c.login_throttle.max_lockout = c.login_throttle.max_lockout.max(c.login_throttle.lockout);
    if let Some(u) = &a.public_url {
        c.public_url = u.clone();
    } else if let Some(h) = a.http_listen {
        c.public_url = format!("http://{h}");
    }
    c.preview_domain = a.preview.domain(&c.public_url);
    c
}

fn init_logging(format: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("TALON_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let b = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if format == "json" {
        b.json().init()
    } else {
        b.init()
    }
}

fn shutdown_signal() -> tokio::sync::watch::Receiver<bool> {
    let (tx, rx) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("signal");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        let _ = tx.send(true);
    });
    rx
}

/// Binds the gateway (so a taken port fails the start) and serves it.
async fn start_gateway(
    server_url: String,
    public_url: &str,
    addr: SocketAddr,
    preview: &PreviewArgs,
    connections: &ConnectionArgs,
    browser_origins: &[String],
    stop: tokio::sync::watch::Receiver<bool>,
) -> anyhow::Result<()> {
    let mut config = talon_gateway::GatewayConfig::new(server_url);
    config.connections = connections.http();
    config.header_timeout = std::time::Duration::from_secs(connections.http_header_timeout_secs);
    config.max_json_bytes = connections.http_max_json_bytes as usize;
    config.max_stream_messages = connections.http_max_stream_messages as usize;
    config.preview_domain = preview.domain(public_url);
    config.public_https = preview.public_https;
    config.browser_origins = browser_origins.to_vec();
    let gw = talon_gateway::Gateway::new(config)?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| anyhow::anyhow!("REST gateway on {addr}: {e}"))?;
    tokio::spawn(async move {
        if let Err(e) = talon_gateway::serve(gw, listener, stop).await {
            tracing::error!(error = %e, "REST gateway stopped");
        }
    });
    Ok(())
}

async fn serve(args: ServerArgs, embedded_worker: bool) -> anyhow::Result<()> {
    let config = server_config(&args);
    let stop = shutdown_signal();
    let started = talon_server::run::start(config.clone(), stop.clone()).await?;
    let http = args
        .http_listen
        .or(embedded_worker.then(|| "127.0.0.1:8080".parse().expect("addr")));
    if let Some(addr) = http {
        let mut preview = args.preview.clone();
        preview.public_https |= config.public_url.starts_with("https://");
        // Browser sessions may be used by pages of the public URL and of
        // the gRPC-web origins.
        let mut origins = vec![origin_of(&config.public_url)];
        origins.extend(config.grpc_web_origins.iter().cloned());
        start_gateway(
            format!("http://{}", config.grpc_listen),
            &config.public_url,
            addr,
            &preview,
            &args.connections,
            &origins,
            stop.clone(),
        )
        .await?;
    }
    println!("Talon is up.");
    println!(
        "  gRPC (+grpc-web, reflection, health): http://{}",
        config.grpc_listen
    );
    if let Some(addr) = http {
        println!("  REST/JSON (+OpenAPI at /openapi.json): http://{addr}");
    }
    println!(
        "  ops (health, readiness, metrics):      http://{}/metrics",
        config.ops_listen
    );
    println!(
        "  data directory:                        {}",
        config.data_dir.display()
    );
    if let Some(b) = &started.bootstrap {
        println!();
        println!("First start: the platform owner was created. These credentials are shown once;");
        println!(
            "they are also in {}/bootstrap-credentials.json (mode 0600).",
            config.data_dir.display()
        );
        println!("  email:    {}", b.email);
        println!("  password: {}", b.password);
        println!("  API key:  {}", b.api_key);
    }
    if embedded_worker {
        let wc = talon_worker::WorkerConfig {
            server_url: format!("http://{}", config.grpc_listen),
            token: started.worker_token.clone(),
            data_dir: config.data_dir.join("worker"),
            max_sandboxes: args.worker_max_sandboxes,
            cpu_overcommit: args.cpu_overcommit,
            runtime: args.runtime.clone(),
            agent_path: args.agent_path.clone(),
            data_listen: "127.0.0.1:0".parse().expect("addr"),
            output_bytes_per_sec: args.host.sandbox_output_bytes_per_sec,
            host: args.host.options()?,
            reconcile_interval: std::time::Duration::from_secs(args.host.reconcile_secs),
        };
        let stop = stop.clone();
        tokio::spawn(async move {
            if let Err(e) = talon_worker::run(wc, stop).await {
                tracing::error!(error = %e, "embedded worker stopped");
            }
        });
    }
    started.grpc.await??;
    Ok(())
}

fn main() -> anyhow::Result<()> {
    // `talon oci …` is the libcontainer runtime, run by the worker in a
    // child process. It must stay single-threaded: dispatch it before the
    // tokio runtime starts any thread.
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("oci") {
        if let Err(e) = talon_worker::youki::main(&args[2..]) {
            eprintln!("talon oci: {e:#}");
            std::process::exit(1);
        }
        return Ok(());
    }
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(run())
}

async fn run() -> anyhow::Result<()> {
    let cli = Cli::parse();
    init_logging(&cli.log_format);
    // Connections, sandboxes and their agent connections all take fds.
    let nofile = talon_core::listen::raise_fd_limit();
    tracing::debug!(nofile, "open-file limit");

    match cli.command {
        Command::Up(a) => serve(a, true).await,
        Command::Server(a) => serve(a, false).await,
        Command::Worker(a) => {
            let token = std::fs::read_to_string(&a.token_file)?.trim().to_string();
            let wc = talon_worker::WorkerConfig {
                server_url: a.server_url,
                token,
                data_dir: a.data_dir,
                max_sandboxes: a.max_sandboxes,
                cpu_overcommit: a.cpu_overcommit,
                runtime: a.runtime,
                agent_path: a.agent_path,
                data_listen: a.data_listen,
                output_bytes_per_sec: a.host.sandbox_output_bytes_per_sec,
                host: a.host.options()?,
                reconcile_interval: std::time::Duration::from_secs(a.host.reconcile_secs),
            };

            talon_worker::run(wc, shutdown_signal()).await
        }
        Command::Gateway {
            server_url,
            http_listen,
            public_url,
            preview,
            connections,
        } => {
            let stop = shutdown_signal();
            let public_url = public_url.unwrap_or_else(|| format!("http://{http_listen}"));
            let origins = vec![origin_of(&public_url)];
            start_gateway(
                server_url,
                &public_url,
                http_listen,
                &preview,
                &connections,
                &origins,
                stop.clone(),
            )
            .await?;
            println!("REST gateway on http://{http_listen}");
            let mut stop = stop;
            let _ = stop.wait_for(|s| *s).await;
            Ok(())
        }
        Command::Image(ImageCommand::Pack {
            rootfs,
            output,
            format,
            reference,
            env,
            working_dir,
        }) => {
            let opts = talon_worker::image::pack::PackOptions {
                reference,
                env,
                working_dir,
            };
            tokio::task::spawn_blocking(move || {
                talon_worker::image::pack::pack(&rootfs, &output, format, &opts)?;
                println!("{}", output.display());
                anyhow::Ok(())
            })
            .await?
        }
        Command::Migrate {
            data_dir,
            database_url,
        } => {
            let dir = data_dir.unwrap_or_else(default_data_dir);
            let url = database_url.unwrap_or_else(|| {
                let _ = std::fs::create_dir_all(&dir);
                talon_server::db::sqlite_url(&dir)
            });
            talon_server::db::connect(&url).await?;
            println!("migrations applied");
            Ok(())
        }
    }
}
