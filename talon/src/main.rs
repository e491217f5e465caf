//! `talon`: `up` (control plane + embedded worker in one process), `server`,
//! `worker` and `migrate`.

use clap::Parser;
use std::net::SocketAddr;
use talon_server::config::ServerConfig;

mod args;
mod console;
mod origins;
use args::*;
use origins::browser_origins;

fn server_config(a: &ServerArgs) -> ServerConfig {
    let data_dir = a.data_dir.clone().unwrap_or_else(default_data_dir);
    let mut c = ServerConfig::with_defaults(data_dir);
    c.grpc_listen = a.grpc_listen;
    c.advertise_url = a.advertise_url.clone();
    c.ops_listen = a.ops_listen;
    if let Some(u) = &a.database_url {
        c.database_url = u.clone();
    }
    c.access_token_ttl = std::time::Duration::from_secs(a.access_token_ttl_secs);
    c.auth_cache_ttl = std::time::Duration::from_millis(a.auth_cache_ms);
    c.sandbox_cache_ttl = std::time::Duration::from_millis(a.sandbox_cache_ms);
    c.grpc_web_origins = a.grpc_web_origins.clone();
    c.grpc_connections = a.connections.grpc();
    c.request_bodies = a.connections.bodies();
    c.ops_connections = a.connections.http();
    c.max_prewarm_pool_size = a.max_prewarm_pool_size;
    c.min_idle_timeout = std::time::Duration::from_secs(a.min_idle_timeout_secs);
    c.max_snapshot_bytes = a.max_snapshot_mib << 20;
    c.tenant_snapshot_bytes = a.tenant_snapshot_mib << 20;
    c.tenant_concurrent_snapshots = a.tenant_concurrent_snapshots;
    c.duty_lease_ttl = std::time::Duration::from_secs(a.duty_lease_secs);
    c.heartbeat_interval = std::time::Duration::from_secs(a.worker_heartbeat_secs);
    c.worker_lease = std::time::Duration::from_secs(a.worker_lease_secs);
    c.failover_grace = std::time::Duration::from_secs(a.failover_grace_secs);
    c.failover_cooldown = std::time::Duration::from_secs(a.failover_cooldown_secs);
    c.failover_rate = a.failover_rate;
    c.failover_local = talon_server::domain::sandboxes::WorkerLoss::parse(&a.failover_local)
        .expect("clap takes only wait or move");
    c.volume_default_mib = a.volume_default_mib;
    c.volume_max_mib = a.volume_max_mib.max(a.volume_default_mib);
    c.volumes_per_tenant = a.volumes_per_tenant;
    c.tenant_max_share = a.tenant_max_share;
    c.placement = match a.placement.as_str() {
        "limits" => talon_server::domain::scheduler::Placement::Limits,
        _ => talon_server::domain::scheduler::Placement::Usage {
            cpu_floor_millis: a.placement_cpu_floor_millis,
            memory_floor_mib: a.placement_memory_floor_mib,
        },
    };
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

/// The gateway's configuration from its flags.
fn gateway_config(
    server_url: String,
    public_url: &str,
    preview: &PreviewArgs,
    connections: &ConnectionArgs,
    browser_origins: &[String],
    console: Option<std::path::PathBuf>,
) -> talon_gateway::GatewayConfig {
    let mut config = talon_gateway::GatewayConfig::new(server_url);
    config.connections = connections.http();
    config.bodies = connections.bodies();
    config.header_timeout = std::time::Duration::from_secs(connections.http_header_timeout_secs);
    config.max_json_bytes = connections.http_max_json_bytes as usize;
    config.max_stream_messages = connections.http_max_stream_messages as usize;
    config.preview_domain = preview.domain(public_url);
    config.public_https = preview.public_https;
    config.browser_origins = browser_origins.to_vec();
    config.console_dir = console;
    config
}

/// Binds the gateway (so a taken port fails the start) and serves it.
async fn start_gateway(
    config: talon_gateway::GatewayConfig,
    addr: SocketAddr,
    stop: tokio::sync::watch::Receiver<bool>,
) -> anyhow::Result<()> {
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

/// The sandboxes' domain E2B's SDKs are told: `--e2b-domain`, else this
/// machine's (`localhost` and the sandbox listener's port). Never none:
/// an SDK told none falls back on E2B's cloud, and one whose
/// E2B_SANDBOX_URL was forgotten would send the sandbox's token there.
fn e2b_domain(args: &ServerArgs, sandbox_addr: Option<SocketAddr>) -> String {
    args.e2b
        .e2b_domain
        .clone()
        .unwrap_or_else(|| match sandbox_addr {
            Some(a) => format!("localhost:{}", a.port()),
            None => "localhost".into(),
        })
}

/// Binds the E2B-compatible API (so a taken port fails the start) and serves it.
async fn start_e2b(
    server_url: String,
    addr: SocketAddr,
    sandbox_addr: Option<SocketAddr>,
    args: &ServerArgs,
    stop: tokio::sync::watch::Receiver<bool>,
) -> anyhow::Result<()> {
    let mut config = talon_e2b::E2bConfig::new(server_url);
    config.default_template = args.e2b.e2b_default_template.clone();
    config.domain = Some(e2b_domain(args, sandbox_addr));
    if let (Some(cert), Some(key)) = (&args.e2b.e2b_tls_cert, &args.e2b.e2b_tls_key) {
        config.tls = Some(talon_e2b::tls::server_config(cert, key)?);
    }

    config.max_list_limit = args.e2b.e2b_max_list_limit;
    config.watchers = talon_e2b::WatcherLimits {
        max: args.e2b.e2b_max_watchers,
        per_tenant: args.e2b.e2b_watchers_per_tenant,
        per_sandbox: args.e2b.e2b_watchers_per_sandbox,
        max_events: args.e2b.e2b_watcher_max_events,
        max_bytes: args.e2b.e2b_watcher_max_kib << 10,
        idle: std::time::Duration::from_secs(args.e2b.e2b_watcher_idle_secs),
    };
    config.connections = args.connections.http();
    config.bodies = args.connections.bodies();
    config.header_timeout =
        std::time::Duration::from_secs(args.connections.http_header_timeout_secs);
    let e = talon_e2b::E2b::new(config)?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| anyhow::anyhow!("E2B-compatible API on {addr}: {e}"))?;
    if let Some(sandbox_addr) = sandbox_addr {
        let sandboxes = tokio::net::TcpListener::bind(sandbox_addr)
            .await
            .map_err(|e| anyhow::anyhow!("E2B sandbox data plane on {sandbox_addr}: {e}"))?;
        let (e, stop) = (e.clone(), stop.clone());
        tokio::spawn(async move {
            if let Err(e) = talon_e2b::serve_sandbox(e, sandboxes, stop).await {
                tracing::error!(error = %e, "E2B sandbox data plane stopped");
            }
        });
    }
    tokio::spawn(async move {
        if let Err(e) = talon_e2b::serve(e, listener, stop).await {
            tracing::error!(error = %e, "E2B-compatible API stopped");
        }
    });
    Ok(())
}

async fn serve(args: ServerArgs, embedded_worker: bool) -> anyhow::Result<()> {
    let mut config = server_config(&args);
    config.expects_worker = embedded_worker;
    let stop = shutdown_signal();
    // Checked before anything starts: a wrong directory is a flag's mistake.
    let console_dir = args.console.dir()?;
    let started = talon_server::run::start(config.clone(), stop.clone()).await?;
    let http = args
        .http_listen
        .or(embedded_worker.then(|| "127.0.0.1:8080".parse().expect("addr")));
    if let Some(addr) = http {
        let mut preview = args.preview.clone();
        preview.public_https |= config.public_url.starts_with("https://");
        // Browser sessions may be used by pages of the public URL and of
        // the gRPC-web origins.
        let mut origins = browser_origins(&config.public_url);
        origins.extend(config.grpc_web_origins.iter().cloned());
        let gw = gateway_config(
            format!("http://{}", config.grpc_listen),
            &config.public_url,
            &preview,
            &args.connections,
            &origins,
            console_dir.clone(),
        );
        start_gateway(gw, addr, stop.clone()).await?;
    }
    let e2b_api = args.e2b.api_listen(embedded_worker)?;
    let e2b_sandbox = args.e2b.sandbox_listen(embedded_worker)?;
    if e2b_sandbox.is_some() && e2b_api.is_none() && args.e2b.e2b_sandbox_listen.is_some() {
        anyhow::bail!("--e2b-sandbox-listen needs the E2B control plane (--e2b-api-listen)");
    }
    let e2b_sandbox = e2b_sandbox.filter(|_| e2b_api.is_some());
    let e2b_scheme = if args.e2b.e2b_tls_cert.is_some() {
        "https"
    } else {
        "http"
    };
    if let Some(addr) = e2b_api {
        start_e2b(
            format!("http://{}", config.grpc_listen),
            addr,
            e2b_sandbox,
            &args,
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
        if console_dir.is_some() {
            let base = config.public_url.trim_end_matches('/');
            println!("  web console:                           {base}/console/");
        }
    }
    println!(
        "  ops (health, readiness, metrics):      http://{}/metrics",
        config.ops_listen
    );
    if let Some(addr) = e2b_api {
        println!("  E2B-compatible API (control plane):    E2B_API_URL={e2b_scheme}://{addr}");
    }
    if let Some(addr) = e2b_sandbox {
        println!("  E2B-compatible API (sandboxes, envd):  E2B_SANDBOX_URL={e2b_scheme}://{addr}");
    }
    if e2b_api.is_some() {
        // With it, a forgotten E2B_API_URL is a failed call here, not
        // this machine's key sent to E2B's cloud.
        println!(
            "  E2B domain (keeps SDKs on this host):  E2B_DOMAIN={}",
            e2b_domain(&args, e2b_sandbox)
        );
    }
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
            data_connections: DataPlaneArgs::embedded(&args.connections.times),
            output_bytes_per_sec: args.host.sandbox_output_bytes_per_sec,
            host: args.host.options()?,
            gvisor: args.host.gvisor(),
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

/// libcontainer says why a step failed only in its own log lines (the
/// error it returns names the step): with `--log FILE`, as the worker
/// runs it, its warnings and errors go to that file too, where the worker
/// reads the tail of a failed run. Its container processes, forked from
/// this one, write there before they exec.
fn oci_log(args: &[String]) {
    let Some(path) = args.windows(2).find(|w| w[0] == "--log").map(|w| &w[1]) else {
        return;
    };
    let Ok(file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    else {
        return;
    };
    let _ = tracing_subscriber::fmt()
        .with_writer(std::sync::Mutex::new(file))
        .with_max_level(tracing::Level::WARN)
        .with_ansi(false)
        .without_time()
        .try_init();
}

fn main() -> anyhow::Result<()> {
    // `talon oci …` is the libcontainer runtime, run by the worker in a
    // child process. It must stay single-threaded: dispatch it before the
    // tokio runtime starts any thread.
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("oci") {
        oci_log(&args);
        if let Err(e) = talon_worker::youki::main(&args[2..]) {
            eprintln!("talon oci: {e:#}");
            std::process::exit(1);
        }
        return Ok(());
    }
    // `talon fence-keeper` is the worker's fence keeper (see
    // talon_worker::keeper), started by the worker with a pipe on stdin.
    if args.get(1).map(String::as_str) == Some(talon_worker::keeper::SUBCOMMAND) {
        return talon_worker::keeper::run(&args[2..]);
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
                data_connections: a.data_plane.limits(&a.times),
                output_bytes_per_sec: a.host.sandbox_output_bytes_per_sec,
                host: a.host.options()?,
                gvisor: a.host.gvisor(),
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
            console,
        } => {
            let stop = shutdown_signal();
            let public_url = public_url.unwrap_or_else(|| format!("http://{http_listen}"));
            let origins = browser_origins(&public_url);
            let console_dir = console.dir()?;
            let with_console = console_dir.is_some();
            let gw = gateway_config(
                server_url,
                &public_url,
                &preview,
                &connections,
                &origins,
                console_dir,
            );
            start_gateway(gw, http_listen, stop.clone()).await?;
            println!("REST gateway on http://{http_listen}");
            if with_console {
                println!(
                    "web console at {}/console/",
                    public_url.trim_end_matches('/')
                );
            }
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
