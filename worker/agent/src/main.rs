//! talon-agent: PID 1 inside every Talon sandbox.
//!
//! It reaps every orphan (as tini does), supervises the processes it is
//! asked to start, keeps their output on disk with rotation, does file
//! operations in the sandbox's own mount namespace, and reports listening
//! ports, all over gRPC on a unix socket. In a sandbox that socket is not
//! a path the workload can see: the worker binds it on the host, in a
//! directory no sandbox reaches, and hands it over as fd 3
//! (`--listen-fd 3`); the agent listens on it, which makes the agent the
//! socket's peer that the worker checks (SO_PEERCRED). The worker's crash
//! or restart does not touch it: its processes and their logs live on,
//! and a new worker reconnects.
//!
//! The workload runs as the same user as the agent, so the agent makes
//! itself non-dumpable first: its memory, environment and fds under
//! /proc/1 are then out of the workload's reach (it lacks CAP_SYS_PTRACE).
//! Its stdio is /dev/null (the runtime's too), its own messages go to
//! `agent.log` in its log directory: no host file is ever open in it.

mod activity;
mod browser;
mod code;
mod files;
mod follow;
mod logstore;
mod ports;
mod redact;
mod runs;
mod service;
mod spawn;
mod supervisor;
mod threads;
mod tunnel;
mod users;
mod watch;

use std::path::PathBuf;
use std::sync::Arc;

struct Args {
    socket: PathBuf,
    /// A bound socket inherited from the worker, instead of `socket`.
    listen_fd: Option<i32>,
    log_dir: PathBuf,
    workspace: PathBuf,
    max_log_bytes: u64,
    /// How far past its two log files a live reader may fall behind, in
    /// bytes kept for it, before the process waits for it.
    max_spill_bytes: u64,
    max_code_contexts: usize,
}

fn usage() -> ! {
    eprintln!(
        "usage: talon-agent [--socket PATH | --listen-fd N] [--log-dir DIR] [--workspace DIR] [--max-log-bytes N] [--max-spill-bytes N] [--max-code-contexts N]\n\
         defaults: /run/talon/agent.sock, /var/log/talon, /workspace, 8388608, 33554432, 16"
    );
    std::process::exit(2)
}

fn args() -> Args {
    let mut a = Args {
        socket: "/run/talon/agent.sock".into(),
        listen_fd: None,
        log_dir: "/var/log/talon".into(),
        workspace: "/workspace".into(),
        max_log_bytes: 8 << 20,
        max_spill_bytes: 32 << 20,
        max_code_contexts: code::MAX_CONTEXTS,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut val = || it.next().unwrap_or_else(|| usage());
        match flag.as_str() {
            "--socket" => a.socket = val().into(),
            "--listen-fd" => a.listen_fd = Some(val().parse().unwrap_or_else(|_| usage())),
            "--log-dir" => a.log_dir = val().into(),
            "--workspace" => a.workspace = val().into(),
            "--max-log-bytes" => a.max_log_bytes = val().parse().unwrap_or_else(|_| usage()),
            "--max-spill-bytes" => a.max_spill_bytes = val().parse().unwrap_or_else(|_| usage()),
            "--max-code-contexts" => {
                a.max_code_contexts = val().parse().unwrap_or_else(|_| usage())
            }
            "--version" => {
                println!("talon-agent {}", env!("CARGO_PKG_VERSION"));
                std::process::exit(0)
            }
            _ => usage(),
        }
    }
    a
}

/// Out of the workload's reach: not dumpable, so /proc/1/{mem,environ,fd}
/// and ptrace need CAP_SYS_PTRACE, which no sandbox has.
fn not_dumpable() -> anyhow::Result<()> {
    // SAFETY: prctl with integer arguments only.
    if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) } != 0 {
        anyhow::bail!("PR_SET_DUMPABLE: {}", std::io::Error::last_os_error());
    }
    Ok(())
}

/// stdin and stdout from /dev/null, stderr to `log` (whatever the
/// runtime gave us, nothing of the host stays open here). The log is in a
/// directory the workload writes: a link planted there is not followed,
/// and a log that cannot be opened is /dev/null, never a failed start.
fn own_stdio(log: &std::path::Path) -> anyhow::Result<()> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let null = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")?;
    let err = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(0o600)
        .open(log)
        .or_else(|_| null.try_clone())?;
    for (from, to) in [
        (null.as_raw_fd(), 0),
        (null.as_raw_fd(), 1),
        (err.as_raw_fd(), 2),
    ] {
        // SAFETY: dup2 onto the standard fds, which we own.
        if unsafe { libc::dup2(from, to) } < 0 {
            anyhow::bail!("dup2: {}", std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The listener on an inherited bound socket: listen() here makes this
/// process the peer a connecting worker sees; close-on-exec keeps it out
/// of every process the agent starts.
fn inherited_listener(fd: i32) -> anyhow::Result<std::os::unix::net::UnixListener> {
    use std::os::fd::FromRawFd;
    // SAFETY: fcntl and listen on an fd number; `from_raw_fd` below takes
    // ownership of it, which the worker handed to us alone.
    unsafe {
        if libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) != 0 {
            anyhow::bail!("fd {fd}: {}", std::io::Error::last_os_error());
        }
        if libc::listen(fd, 128) != 0 {
            anyhow::bail!("listen on fd {fd}: {}", std::io::Error::last_os_error());
        }
        let l = std::os::unix::net::UnixListener::from_raw_fd(fd);
        l.set_nonblocking(true)?;
        Ok(l)
    }
}

fn main() -> anyhow::Result<()> {
    // `talon-agent --set-hostname NAME`: a one-shot the worker runs inside
    // a gVisor sandbox (whose hostname lives in gVisor's kernel) when it
    // claims a pooled one.
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, name] = argv.as_slice()
        && flag == "--set-hostname"
    {
        // SAFETY: sethostname with a valid buffer and its length.
        if unsafe { libc::sethostname(name.as_ptr().cast(), name.len()) } != 0 {
            anyhow::bail!("sethostname: {}", std::io::Error::last_os_error());
        }
        return Ok(());
    }
    let a = args();
    not_dumpable()?;
    use anyhow::Context;
    std::fs::create_dir_all(&a.log_dir).with_context(|| a.log_dir.display().to_string())?;
    std::fs::create_dir_all(&a.workspace).with_context(|| a.workspace.display().to_string())?;
    let inherited = match a.listen_fd {
        Some(fd) => {
            own_stdio(&a.log_dir.join("agent.log")).context("stdio")?;
            Some(inherited_listener(fd).context("the inherited socket")?)
        }
        None => {
            if let Some(dir) = a.socket.parent() {
                std::fs::create_dir_all(dir)?;
            }
            None
        }
    };
    // As PID 1, the kernel ignores signals we have no handler for; TERM and
    // INT end the agent (and with it the sandbox) on purpose.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(async move {
        activity::touch();
        logstore::keep_reserve(&a.log_dir);
        let sup = supervisor::Supervisor::new(
            a.log_dir.clone(),
            a.max_log_bytes,
            a.max_spill_bytes,
            a.workspace.clone(),
        );

        let files = Arc::new(files::Files::new(a.workspace.clone()).context("the workspace")?);
        let listener = match inherited {
            Some(l) => tokio::net::UnixListener::from_std(l)?,
            None => {
                let _ = std::fs::remove_file(&a.socket);
                tokio::net::UnixListener::bind(&a.socket)?
            }
        };
        let runs = runs::Runs::new(sup.clone(), files.clone(), a.workspace.to_string_lossy().into_owned());
        let browser = browser::Browser::new(sup.clone(), a.workspace.to_string_lossy().into_owned());
        let code = code::Contexts::new(
            sup.clone(),
            a.workspace.to_string_lossy().into_owned(),
            a.max_code_contexts,
        );
        let agent = service::Agent { sup, files, runs, browser, code, started: std::time::Instant::now() };
        let svc = talon_proto::talon::agent::v1::sandbox_agent_service_server::SandboxAgentServiceServer::new(agent)
            .max_decoding_message_size(talon_core::wire::MAX_MESSAGE_BYTES);
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
