//! Starting a plain process (pipes, no PTY, the agent's own user) with
//! posix_spawn. glibc starts the child with clone(CLONE_VM|CLONE_VFORK),
//! so the agent's address space is neither copied nor torn down again, as
//! std's fork+exec does once anything runs between fork and exec (our
//! `setsid` did): that copy was most of an exec's time in the agent (spawn
//! 0.7-1.4 ms). `POSIX_SPAWN_SETSID` keeps each process the leader of its
//! own session and group, which `Proc::signal` relies on.
//!
//! What fork+exec did that posix_spawn does not is done here instead: the
//! program is looked up on the PATH of the environment the process gets
//! (relative entries against its cwd), every signal starts at its default
//! disposition, unmasked. A program the kernel will not exec as it is
//! (ENOEXEC: a script without `#!`) is refused here so the caller can
//! start it the old way, where execvp hands it to /bin/sh.

use std::ffi::{CString, OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// execvp's PATH when the environment has none.
const DEFAULT_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

pub struct Spawned {
    pub pid: u32,
    pub stdin: Option<File>,
    pub stdout: File,
    pub stderr: File,
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two fds, which we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both were just returned to us.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn cstr(b: &[u8]) -> io::Result<CString> {
    CString::new(b).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in argument"))
}

/// The file `program` names, as execvp would find it on `path`.
fn resolve(program: &str, path: Option<&OsStr>, cwd: &Path) -> io::Result<PathBuf> {
    if program.contains('/') {
        return Ok(PathBuf::from(program));
    }
    let path = path.map_or(DEFAULT_PATH.as_bytes(), |p| p.as_bytes());
    let mut denied = false;
    for dir in path.split(|b| *b == b':') {
        let dir = Path::new(OsStr::from_bytes(if dir.is_empty() { b"." } else { dir }));
        let candidate = cwd.join(dir).join(program);
        match std::fs::metadata(&candidate) {
            Ok(m) if m.is_file() && m.permissions().mode() & 0o111 != 0 => return Ok(candidate),
            Ok(m) if m.is_file() => denied = true,
            _ => {}
        }
    }
    Err(if denied {
        io::ErrorKind::PermissionDenied.into()
    } else {
        io::ErrorKind::NotFound.into()
    })
}

/// Owns posix_spawn's two argument objects for the length of one call.
struct Actions(libc::posix_spawn_file_actions_t);
struct Attrs(libc::posix_spawnattr_t);

impl Drop for Actions {
    fn drop(&mut self) {
        // SAFETY: initialized in `spawn` before this value existed.
        unsafe { libc::posix_spawn_file_actions_destroy(&mut self.0) };
    }
}
impl Drop for Attrs {
    fn drop(&mut self) {
        // SAFETY: as above.
        unsafe { libc::posix_spawnattr_destroy(&mut self.0) };
    }
}

fn check(r: libc::c_int) -> io::Result<()> {
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(r))
    }
}

/// Starts `argv` in `cwd` with exactly `env`, its own session, stdout and
/// stderr on pipes, and stdin on a pipe (`want_stdin`) or /dev/null.
pub fn spawn(
    argv: &[String],
    env: &[(OsString, OsString)],
    cwd: &str,
    want_stdin: bool,
) -> io::Result<Spawned> {
    let path_var = env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.as_os_str());
    let program = resolve(&argv[0], path_var, Path::new(cwd))?;
    let program = cstr(program.as_os_str().as_bytes())?;
    let args = argv
        .iter()
        .map(|a| cstr(a.as_bytes()))
        .collect::<io::Result<Vec<_>>>()?;
    let vars = env
        .iter()
        .map(|(k, v)| {
            let mut kv = k.as_bytes().to_vec();
            kv.push(b'=');
            kv.extend_from_slice(v.as_bytes());
            cstr(&kv)
        })
        .collect::<io::Result<Vec<_>>>()?;
    let ptrs = |v: &[CString]| -> Vec<*mut libc::c_char> {
        v.iter()
            .map(|c| c.as_ptr().cast_mut())
            .chain(std::iter::once(std::ptr::null_mut()))
            .collect()
    };
    let (argp, envp) = (ptrs(&args), ptrs(&vars));
    let cwd = cstr(cwd.as_bytes())?;

    let (stdin_child, stdin_ours) = if want_stdin {
        let (r, w) = pipe()?;
        (r, Some(w))
    } else {
        (File::open("/dev/null")?.into(), None)
    };
    let (out_ours, out_child) = pipe()?;
    let (err_ours, err_child) = pipe()?;

    let mut pid: libc::pid_t = 0;
    // SAFETY: every pointer handed to posix_spawn (program, argv and envp
    // arrays, each NUL-terminated and ending in a null pointer; the cwd)
    // outlives the call; the fds are open; the two objects are initialized
    // before use and destroyed by their guards.
    unsafe {
        let mut fa = Actions(std::mem::zeroed());
        check(libc::posix_spawn_file_actions_init(&mut fa.0))?;
        for (fd, target) in [
            (stdin_child.as_raw_fd(), 0),
            (out_child.as_raw_fd(), 1),
            (err_child.as_raw_fd(), 2),
        ] {
            check(libc::posix_spawn_file_actions_adddup2(
                &mut fa.0, fd, target,
            ))?;
        }
        check(libc::posix_spawn_file_actions_addchdir_np(
            &mut fa.0,
            cwd.as_ptr(),
        ))?;
        let mut at = Attrs(std::mem::zeroed());
        check(libc::posix_spawnattr_init(&mut at.0))?;
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        check(libc::posix_spawnattr_setsigmask(&mut at.0, &none))?;
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        check(libc::posix_spawnattr_setsigdefault(&mut at.0, &all))?;
        let flags = libc::POSIX_SPAWN_SETSID
            | libc::POSIX_SPAWN_SETSIGMASK as libc::c_short
            | libc::POSIX_SPAWN_SETSIGDEF as libc::c_short;
        check(libc::posix_spawnattr_setflags(&mut at.0, flags))?;
        check(libc::posix_spawn(
            &mut pid,
            program.as_ptr(),
            &fa.0,
            &at.0,
            argp.as_ptr(),
            envp.as_ptr(),
        ))?;
    }
    // The child's ends close here; ours stay.
    drop((stdin_child, out_child, err_child));
    Ok(Spawned {
        pid: pid as u32,
        stdin: stdin_ours.map(File::from),
        stdout: File::from(out_ours),
        stderr: File::from(err_ours),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    fn wait(pid: u32) -> i32 {
        let mut status = 0;
        // SAFETY: waitpid on our own child.
        unsafe { libc::waitpid(pid as i32, &mut status, 0) };
        status
    }

    fn env(extra: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        let mut v: Vec<(OsString, OsString)> = vec![("PATH".into(), DEFAULT_PATH.into())];
        v.extend(extra.iter().map(|(k, v)| (k.into(), v.into())));
        v
    }

    fn argv(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn runs_with_its_env_cwd_stdin_and_own_session() {
        let mut s = spawn(
            &argv(&[
                "sh",
                "-c",
                "read x; echo \"$x $FOO $(pwd) $(ps -o sid= -p $$ | tr -d ' ')\"; echo err >&2; exit 3",
            ]),
            &env(&[("FOO", "bar")]),
            "/tmp",
            true,
        )
        .unwrap();
        let mut stdin = s.stdin.take().unwrap();
        stdin.write_all(b"hi\n").unwrap();
        drop(stdin);
        let (mut out, mut err) = (String::new(), String::new());
        s.stdout.read_to_string(&mut out).unwrap();
        s.stderr.read_to_string(&mut err).unwrap();
        let status = wait(s.pid);
        assert_eq!(libc::WEXITSTATUS(status), 3);
        // Its session id is its own pid: it leads a new session.
        assert_eq!(out.trim(), format!("hi bar /tmp {}", s.pid));
        assert_eq!(err, "err\n");
    }

    #[test]
    fn stdin_is_dev_null_when_not_asked_for() {
        let mut s = spawn(&argv(&["cat"]), &env(&[]), "/", false).unwrap();
        assert!(s.stdin.is_none());
        let mut out = String::new();
        s.stdout.read_to_string(&mut out).unwrap();
        wait(s.pid);
        assert_eq!(out, "");
    }

    #[test]
    fn looks_up_the_path_it_is_given() {
        let dir = tempfile::tempdir().unwrap();
        let tool = dir.path().join("only-here");
        std::fs::write(&tool, "#!/bin/sh\necho found\n").unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = format!("{}:/bin", dir.path().display());
        let mut s = spawn(&argv(&["only-here"]), &env(&[("PATH", &path)]), "/", false).unwrap();
        let mut out = String::new();
        s.stdout.read_to_string(&mut out).unwrap();
        wait(s.pid);
        assert_eq!(out, "found\n");
        // Not on the default PATH; a file without x is refused.
        let e = spawn(&argv(&["only-here"]), &env(&[]), "/", false)
            .err()
            .unwrap();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = spawn(&argv(&["only-here"]), &env(&[("PATH", &path)]), "/", false)
            .err()
            .unwrap();
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
    }

    #[test]
    fn a_script_without_shebang_is_left_to_the_caller() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("plain");
        std::fs::write(&script, "echo hi\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = spawn(&argv(&[script.to_str().unwrap()]), &env(&[]), "/", false)
            .err()
            .unwrap();
        assert_eq!(e.raw_os_error(), Some(libc::ENOEXEC));
    }
}
