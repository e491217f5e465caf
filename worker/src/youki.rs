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
    mend(&dir)?;
    Ok(Container::load(dir)?)
}

// libcontainer rewrites `state.json` in place (it truncates, then writes):
// a `kill -9` of this process between the two, as a crash of the worker's
// host or an OOM kill does, leaves it empty, and the container could then
// never be paused, resumed, killed or deleted again (the crash test found
// one stuck so). So after every command that succeeds, a copy of the whole
// file is kept beside it (written under another name, synced, renamed
// over), and a `state.json` that does not parse is put back from that copy
// before libcontainer reads it. The copy's pid, bundle and cgroup are the
// container's for its whole life; its status is refreshed from the process
// and the freezer on every load, as libcontainer does for any state file.
const STATE: &str = "state.json";
const GOOD: &str = "state.json.good";

fn parses(path: &Path) -> bool {
    std::fs::read(path)
        .ok()
        .is_some_and(|b| serde_json::from_slice::<serde_json::Value>(&b).is_ok())
}

/// Writes `bytes` to `to` so that a crash leaves the old file or the new
/// one, never a part.
fn replace(dir: &Path, to: &str, bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write;
    let tmp = dir.join(format!("{to}.tmp"));
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::rename(&tmp, dir.join(to))?;
    std::fs::File::open(dir)?.sync_all()?;
    Ok(())
}

/// Keeps a copy of a complete `state.json` (after a command succeeded).
fn keep_good(dir: &Path) -> anyhow::Result<()> {
    let state = dir.join(STATE);
    if !parses(&state) {
        return Ok(());
    }
    replace(dir, GOOD, &std::fs::read(state)?)
}

/// Puts a torn `state.json` back from the last complete copy.
fn mend(dir: &Path) -> anyhow::Result<()> {
    let good = dir.join(GOOD);
    if parses(&dir.join(STATE)) || !parses(&good) {
        return Ok(());
    }
    tracing::warn!(dir = %dir.display(), "state.json was torn by a crash; put back from its last complete copy");
    replace(dir, STATE, &std::fs::read(good)?)
}

/// `delete --force` of a container whose state is torn and has no copy
/// (a crash during its first save, while it was created): its processes
/// are found by the cgroup recorded in `youki_config.json` (ours, under
/// `/talon/`), thawed and killed, the cgroups removed, and the directory
/// with them.
fn force_delete_torn(dir: &Path) -> anyhow::Result<()> {
    let cfg: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("youki_config.json"))?)?;
    let cg = cfg["cgroup_path"].as_str().unwrap_or_default();
    let id = cg.strip_prefix("/talon/").unwrap_or_default();
    anyhow::ensure!(
        !id.is_empty() && !id.contains('/') && id != "..",
        "{}: its cgroup {cg:?} is not one of ours",
        dir.display()
    );
    crate::keeper::kill_sandbox("talon", id);
    for d in crate::keeper::cgroup_dirs("talon", id) {
        let _ = std::fs::remove_dir(d);
    }
    std::fs::remove_dir_all(dir)?;
    Ok(())
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
        return keep_good(&root.join(id));
    }
    match rest {
        ["pause", id] => {
            load(&root, id)?.pause()?;
            keep_good(&root.join(id))
        }
        ["resume", id] => {
            load(&root, id)?.resume()?;
            keep_good(&root.join(id))
        }
        ["kill", id, sig] => {
            let sig = Signal::try_from(*sig).map_err(|e| anyhow::anyhow!("{e}"))?;
            load(&root, id)?.kill(sig, true)?;
            keep_good(&root.join(id))
        }
        ["delete", "--force", id] | ["delete", id] => {
            let force = rest.contains(&"--force");
            let dir = root.join(id);
            if force && dir.exists() && !parses(&dir.join(STATE)) && !parses(&dir.join(GOOD)) {
                return force_delete_torn(&dir);
            }
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
