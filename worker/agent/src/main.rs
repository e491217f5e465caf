//! talon-agent: PID 1 inside every Talon sandbox.
//!
//! It reaps every orphan (as tini does), supervises the processes it is
//! asked to start, keeps their output on disk with rotation, does file
//! operations in the sandbox's own mount namespace, and reports listening
//! ports, all over gRPC on a unix socket that the worker bind-mounts into
//! the sandbox. The worker's crash or restart does not touch it: its
//! processes and their logs live on, and a new worker reconnects.

mod files;
mod logstore;
mod ports;
mod service;
mod spawn;
mod supervisor;
mod threads;
mod tunnel;
mod watch;

use std::path::PathBuf;
use std::sync::Arc;

struct Args {
    socket: PathBuf,
    log_dir: PathBuf,
    workspace: PathBuf,
    max_log_bytes: u64,
}

fn usage() -> ! {
    eprintln!(
        "usage: talon-agent [--socket PATH] [--log-dir DIR] [--workspace DIR] [--max-log-bytes N]\n\
         defaults: /run/talon/agent.sock, /var/log/talon, /workspace, 8388608"
    );
    std::process::exit(2)
}

fn args() -> Args {
    let mut a = Args {
        socket: "/run/talon/agent.sock".into(),
        log_dir: "/var/log/talon".into(),
        workspace: "/workspace".into(),
        max_log_bytes: 8 << 20,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut val = || it.next().unwrap_or_else(|| usage());
        match flag.as_str() {
            "--socket" => a.socket = val().into(),
            "--log-dir" => a.log_dir = val().into(),
            "--workspace" => a.workspace = val().into(),
            "--max-log-bytes" => a.max_log_bytes = val().parse().unwrap_or_else(|_| usage()),
            "--version" => {
                println!("talon-agent {}", env!("CARGO_PKG_VERSION"));
                std::process::exit(0)
            }
            _ => usage(),
        }
    }
    a
}

fn main() -> anyhow::Result<()> {
    let a = args();
    std::fs::create_dir_all(&a.log_dir)?;
    std::fs::create_dir_all(&a.workspace)?;
    if let Some(dir) = a.socket.parent() {
        std::fs::create_dir_all(dir)?;
    }
    // As PID 1, the kernel ignores signals we have no handler for; TERM and
    // INT end the agent (and with it the sandbox) on purpose.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let sup = supervisor::Supervisor::new(a.log_dir.clone(), a.max_log_bytes, a.workspace.clone());
        let files = Arc::new(files::Files::new(a.workspace.clone())?);
        let _ = std::fs::remove_file(&a.socket);
        let listener = tokio::net::UnixListener::bind(&a.socket)?;
        let agent = service::Agent { sup, files, started: std::time::Instant::now() };
        let svc = talon_proto::talon::agent::v1::sandbox_agent_service_server::SandboxAgentServiceServer::new(agent)
            .max_decoding_message_size(16 << 20);
        let incoming = tokio_stream::wrappers::UnixListenerStream::new(listener);
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        tonic::transport::Server::builder()
            .initial_stream_window_size(Some(talon_proto::h2::STREAM_WINDOW))
            .initial_connection_window_size(Some(talon_proto::h2::CONNECTION_WINDOW))
            .max_frame_size(Some(talon_proto::h2::MAX_FRAME))
            .add_service(svc)
            .serve_with_incoming_shutdown(incoming, async move {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            })
            .await?;
        Ok(())
    })
}
