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
use std::path::{Path, PathBuf};

fn usage() -> anyhow::Error {
    anyhow::anyhow!(
        "usage: talon oci --root DIR (run --detach --pid-file FILE --bundle DIR ID | pause ID | resume ID | kill ID SIGNAL | delete [--force] ID | state ID)"
    )
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
pub fn main(args: &[String]) -> anyhow::Result<()> {
    let mut it = args.iter().map(String::as_str);
    let (Some("--root"), Some(root)) = (it.next(), it.next()) else {
        return Err(usage());
    };
    let root = PathBuf::from(root);
    std::fs::create_dir_all(&root)?;
    let rest: Vec<&str> = it.collect();
    match rest.as_slice() {
        [
            "run",
            "--detach",
            "--pid-file",
            pid_file,
            "--bundle",
            bundle,
            id,
        ] => {
            let mut c = ContainerBuilder::new(id.to_string(), SyscallType::default())
                .with_executor(DefaultExecutor {})
                .with_root_path(&root)?
                .with_pid_file(Some(*pid_file))?
                .validate_id()?
                .as_init(*bundle)
                .with_systemd(false)
                .with_detach(true)
                .build()?;
            c.start()?;
            Ok(())
        }
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
