//! The libcontainer (youki) adapter. libcontainer forks and runs Rust code
//! in the child before exec, which is only safe in a single-threaded
//! process, and the worker is a multi-threaded tokio program. So the worker
//! runs this code in a short-lived child, `talon oci …`, started before any
//! thread exists, with the same command line as runc. The `Runtime` adapter
//! is then the OCI-CLI adapter pointed at that command.

use libcontainer::container::builder::ContainerBuilder;
use libcontainer::container::{Container, ContainerStatus};
use libcontainer::signal::Signal;
use libcontainer::syscall::syscall::SyscallType;
use libcontainer::workload::default::DefaultExecutor;
use std::path::Path;

fn usage() -> anyhow::Error {
    anyhow::anyhow!(
        "usage: talon oci --root DIR [--log FILE] (run --detach [--preserve-fds N] --pid-file FILE --bundle DIR ID | pause ID | resume ID | kill ID SIGNAL | delete [--force] ID | state ID)"
    )
}

/// /dev/null, for the container's stdio: a detached container would keep
/// ours, and a host file there is readable through /proc/1/fd.
fn dev_null() -> anyhow::Result<std::fs::File> {
    Ok(std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")?)
}

fn load(root: &Path, id: &str) -> anyhow::Result<Container> {
    let dir = root.join(id);
    if !dir.exists() {
        anyhow::bail!("container {id} does not exist");
    }
    Ok(Container::load(dir)?)
}

fn status_name(s: ContainerStatus) -> &'static str {
    match s {
        ContainerStatus::Creating | ContainerStatus::Created => "created",
        ContainerStatus::Running => "running",
        ContainerStatus::Paused => "paused",
        ContainerStatus::Stopped => "stopped",
    }
}

/// Runs one runtime command; call only from a single-threaded process.
/// With `--log FILE` (as runc takes it), an error is written there too.
pub fn main(args: &[String]) -> anyhow::Result<()> {
    let mut it = args.iter().map(String::as_str).peekable();
    let (Some("--root"), Some(root)) = (it.next(), it.next()) else {
        return Err(usage());
    };
    let log = match it.peek() {
        Some(&"--log") => {
            it.next();
            Some(it.next().ok_or_else(usage)?)
        }
        _ => None,
    };
    let rest: Vec<&str> = it.collect();
    let r = command(Path::new(root), &rest);
    if let (Err(e), Some(log)) = (&r, log) {
        use std::io::Write;
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
        {
            let _ = writeln!(f, "talon oci: {e:#}");
        }
    }
    r
}

fn command(root: &Path, rest: &[&str]) -> anyhow::Result<()> {
    let root = root.to_path_buf();
    crate::private_dir(&root)?;
    let (preserve, run) = match rest {
        ["run", "--detach", "--preserve-fds", n, tail @ ..] => (n.parse::<i32>()?, Some(tail)),
        ["run", "--detach", tail @ ..] => (0, Some(tail)),
        _ => (0, None),
    };
    if let Some(tail) = run {
        let ["--pid-file", pid_file, "--bundle", bundle, id] = tail else {
            return Err(usage());
        };
        let mut c = ContainerBuilder::new(id.to_string(), SyscallType::default())
            .with_executor(DefaultExecutor {})
            .with_root_path(&root)?
            .with_pid_file(Some(*pid_file))?
            .with_preserved_fds(preserve)
            .with_stdin(dev_null()?)
            .with_stdout(dev_null()?)
            .with_stderr(dev_null()?)
            .validate_id()?
            .as_init(*bundle)
            .with_systemd(false)
            .with_detach(true)
            .build()?;
        c.start()?;
        return Ok(());
    }
    match rest {
        ["pause", id] => Ok(load(&root, id)?.pause()?),
        ["resume", id] => Ok(load(&root, id)?.resume()?),
        ["kill", id, sig] => {
            let sig = Signal::try_from(*sig).map_err(|e| anyhow::anyhow!("{e}"))?;
            Ok(load(&root, id)?.kill(sig, true)?)
        }
        ["delete", "--force", id] | ["delete", id] => {
            let force = rest.contains(&"--force");
            Ok(load(&root, id)?.delete(force)?)
        }
        ["state", id] => {
            let mut c = load(&root, id)?;
            c.refresh_status()?;
            println!(
                "{}",
                serde_json::json!({
                    "id": id,
                    "status": status_name(c.status()),
                    "pid": c.pid().map_or(0, |p| p.as_raw()),
                })
            );
            Ok(())
        }
        _ => Err(usage()),
    }
}
