//! Escape tests, kernel surface: the init binary, inherited fds, masked
//! and read-only paths, privileged syscalls, capabilities, namespace
//! creation by raw syscall under every adapter, and /proc/1 from the
//! workload. Each drives the worker's sandbox host directly and asserts
//! the attack fails. Root is required; CI is root.

mod common;

use common::{agent_binary, sandbox, sha};
use std::path::{Path, PathBuf};

#[tokio::test(flavor = "multi_thread")]
async fn escape_init_binary_cannot_be_overwritten() {
    let mut s = sandbox((1000, 256, 256)).await;
    let sealed: Vec<PathBuf> = std::fs::read_dir(s.data.join("agent"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let before: Vec<String> = sealed.iter().map(|p| sha(p)).collect();
    let agent_before = sha(&agent_binary());
    let (_, _, code) = s
        .sh("echo x > /proc/self/exe || true; echo x > /proc/1/exe; echo x > /.talon/agent")
        .await;
    assert_ne!(code, 0);
    let (_, _, code) = s.sh("cp /bin/true /.talon/agent").await;
    assert_ne!(code, 0, "the init binary is read-only");
    let after: Vec<String> = sealed.iter().map(|p| sha(p)).collect();
    assert_eq!(before, after, "the sealed agent changed");
    assert_eq!(
        agent_before,
        sha(&agent_binary()),
        "the host agent binary changed"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn escape_no_inherited_fds() {
    let mut s = sandbox((1000, 256, 256)).await;
    // The listing opens one fd of its own (the directory); skip it.
    let (out, _, _) = s
        .sh("ls -l /proc/self/fd | awk 'NR>1 {print $9, $11}'")
        .await;
    let fds: Vec<&str> = out
        .lines()
        .filter(|l| !l.contains("/proc/"))
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    assert_eq!(fds, vec!["0", "1", "2"], "{out}");
}

#[tokio::test(flavor = "multi_thread")]
async fn escape_masked_and_read_only_paths() {
    let mut s = sandbox((1000, 256, 256)).await;
    for p in [
        "/proc/kcore",
        "/proc/keys",
        "/proc/timer_list",
        "/proc/sched_debug",
        "/proc/acpi",
        "/proc/scsi",
        "/sys/firmware",
    ] {
        let (out, _, _) = s
            .sh(&format!(
                "if [ -d {p} ]; then ls -A {p}; else head -c 64 {p} 2>/dev/null; fi"
            ))
            .await;
        assert!(out.trim().is_empty(), "{p} is not masked: {out:?}");
    }
    for p in [
        "/proc/sys/kernel/hostname",
        "/proc/sysrq-trigger",
        "/proc/sys/vm/drop_caches",
    ] {
        let (_, _, code) = s.sh(&format!("echo 1 > {p}")).await;
        assert_ne!(code, 0, "{p} is writable");
    }
    let (_, _, code) = s.sh("touch /usr/bin/planted").await;
    assert_ne!(code, 0, "host /usr is writable");
}

#[tokio::test(flavor = "multi_thread")]
async fn escape_privileged_syscalls_fail() {
    let mut s = sandbox((1000, 256, 256)).await;
    let (_, _, code) = s.sh("mount -t tmpfs x /tmp").await;
    assert_ne!(code, 0, "mount");
    let (_, _, code) = s.sh("unshare -U true").await;
    assert_ne!(code, 0, "unshare -U");
    // keyctl(KEYCTL_GET_KEYRING_ID), bpf(BPF_PROG_LOAD), ptrace(PTRACE_ATTACH, 1), via libc.
    let py = r#"
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
fails = []
for name, nr, args in [("keyctl", 250, (0, -1, 0)), ("bpf", 321, (5, 0, 0)), ("ptrace", 101, (16, 1, 0))]:
    r = libc.syscall(nr, *args)
    fails.append(f"{name}={r}:{ctypes.get_errno()}")
print(" ".join(fails))
"#;
    let (out, err, code) = s
        .sh(&format!("python3 -c '{}'", py.replace('\'', "\"")))
        .await;
    assert_eq!(code, 0, "{err}");
    for part in out.split_whitespace() {
        let (name, rest) = part.split_once('=').unwrap();
        assert!(rest.starts_with("-1:"), "{name} succeeded: {out}");
        let errno: i32 = rest[3..].parse().unwrap();
        assert!(
            errno == libc::EPERM || errno == libc::ENOSYS,
            "{name} errno {errno}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn escape_capabilities_and_no_new_privs() {
    let mut s = sandbox((1000, 256, 256)).await;
    let (out, _, _) = s
        .sh("grep -E '^(CapBnd|CapEff|NoNewPrivs|Seccomp):' /proc/self/status")
        .await;
    let field = |k: &str| {
        out.lines()
            .find(|l| l.starts_with(k))
            .unwrap()
            .split_whitespace()
            .nth(1)
            .unwrap()
            .to_string()
    };
    let bnd = u64::from_str_radix(&field("CapBnd:"), 16).unwrap();
    // CHOWN DAC_OVERRIDE FOWNER FSETID KILL SETGID SETUID SETPCAP NET_BIND_SERVICE NET_RAW SYS_CHROOT MKNOD AUDIT_WRITE SETFCAP
    let default: u64 = [0, 1, 3, 4, 5, 6, 7, 8, 10, 13, 18, 27, 29, 31]
        .iter()
        .map(|b| 1u64 << b)
        .sum();
    assert_eq!(
        bnd & !default,
        0,
        "capabilities beyond the default set: {bnd:x}"
    );
    assert_eq!(field("NoNewPrivs:"), "1");
    assert_eq!(field("Seccomp:"), "2");
}

/// No namespace can be made or entered from a sandbox, by any raw
/// syscall with any namespace flag, under any runtime adapter: clone with
/// each flag (libcontainer 0.7 once read the clone rule's mask as 0 and
/// let `clone(CLONE_NEWUSER|CLONE_NEWNET)` through), clone3, unshare and
/// setns; and no vsock socket (the VM's host channel). A plain clone and
/// a unix socket still work.
#[tokio::test(flavor = "multi_thread")]
async fn escape_namespace_creation_by_raw_syscall_under_every_adapter() {
    let probe = std::fs::read(common::static_probe("nsprobe")).unwrap();
    for rt in common::adapters() {
        let env = common::TestHost::with_runtime(talon_worker::host::HostOptions::default(), rt);
        let mut s = common::create(&env, &common::spec("host", (1000, 256, 256)))
            .await
            .unwrap_or_else(|e| panic!("{rt}: {e:#}"));
        s.put("nsprobe", &probe, 0o755).await;
        let (out, err, code) = s.sh("/workspace/nsprobe").await;
        assert_eq!(code, 0, "{rt}: {err}");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines.len(),
            36,
            "{rt}: the probe did not finish:\n{out}{err}"
        );
        for l in &lines {
            let controls = ["clone plain ", "socket AF_UNIX "];
            if controls.iter().any(|c| l.starts_with(c)) {
                assert!(l.ends_with(" ok"), "{rt}: control failed: {l}");
                continue;
            }
            let errno: i32 = l
                .rsplit_once("errno=")
                .unwrap_or_else(|| panic!("{rt}: allowed: {l}\n{out}"))
                .1
                .parse()
                .unwrap();
            assert!(
                [libc::EPERM, libc::ENOSYS].contains(&errno),
                "{rt}: {l} (EPERM or ENOSYS expected)"
            );
        }
    }
}

/// The agent (PID 1) is out of the workload's reach: not dumpable, so
/// /proc/1/mem, /proc/1/environ and its fds are closed to it; and its
/// stdio is /dev/null, never a host file (the probe read the bundle's
/// runtime.log through /proc/1/fd/1: the CVE-2024-21626 family). Under
/// every adapter.
#[tokio::test(flavor = "multi_thread")]
async fn escape_proc_1_is_closed_to_the_workload() {
    for rt in common::adapters() {
        let env = common::TestHost::with_runtime(talon_worker::host::HostOptions::default(), rt);
        let mut s = common::create(&env, &common::spec("host", (500, 128, 64)))
            .await
            .unwrap_or_else(|e| panic!("{rt}: {e:#}"));
        let (out, _, _) = s
            .sh("for f in mem environ; do if head -c1 /proc/1/$f >/dev/null 2>&1; then echo $f readable; fi; \
                 if ( : > /proc/1/$f ) 2>/dev/null; then echo $f writable; fi; done; \
                 ls -l /proc/1/fd/ 2>/dev/null | grep -- '->' ; \
                 for n in 0 1 2 3; do head -c1 /proc/1/fd/$n >/dev/null 2>&1 && echo fd$n readable; done; \
                 grep -E '^(TracerPid)' /proc/1/status; true")
            .await;
        for bad in [
            "mem readable",
            "mem writable",
            "environ readable",
            "->",
            "fd1 readable",
            "fd2 readable",
        ] {
            assert!(
                !out.contains(bad),
                "{rt}: /proc/1 is open to the workload ({bad}):\n{out}"
            );
        }
        // The host side of the same question: what the init holds open.
        let pid = env.host.held(&s.id).unwrap().init.unwrap().0;
        let bundle = s.dir().join("bundle");
        for fd in std::fs::read_dir(format!("/proc/{pid}/fd"))
            .unwrap()
            .flatten()
        {
            let target = std::fs::read_link(fd.path()).unwrap();
            assert!(
                !target.starts_with(&bundle),
                "{rt}: the agent holds a host file open: {} -> {}",
                fd.path().display(),
                target.display()
            );
        }
        let stdio: Vec<_> = (0..2)
            .map(|n| std::fs::read_link(format!("/proc/{pid}/fd/{n}")).unwrap())
            .collect();
        assert!(
            stdio.iter().all(|t| t == Path::new("/dev/null")),
            "{rt}: {stdio:?}"
        );
    }
}
