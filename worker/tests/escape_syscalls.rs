//! Escape tests, kernel surface: the init binary, inherited fds, masked
//! and read-only paths, privileged syscalls, capabilities, namespace
//! creation by raw syscall, and /proc/1 from the workload, under every
//! adapter and under gVisor. Each drives the worker's sandbox host
//! directly and asserts the attack fails. Where gVisor's own kernel
//! answers (it makes namespaces, and has no seccomp filter of ours in it),
//! the test asserts what must hold there instead: nothing reaches the
//! host, whose processes for the sandbox stay unprivileged, filtered and
//! in the namespaces they started in. Root is required; CI is root.

mod common;

use common::{Level, agent_binary, levels, sha};
use std::path::{Path, PathBuf};

#[tokio::test(flavor = "multi_thread")]
async fn escape_init_binary_cannot_be_overwritten() {
    for level in levels() {
        let mut s = level.sandbox("host", (1000, 256, 256)).await;
        let sealed: Vec<PathBuf> = std::fs::read_dir(s.data.join("agent"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        let before: Vec<String> = sealed.iter().map(|p| sha(p)).collect();
        let agent_before = sha(&agent_binary());
        let (_, _, code) = s
            .sh("echo x > /proc/self/exe || true; echo x > /proc/1/exe; echo x > /.talon/agent")
            .await;
        assert_ne!(code, 0, "{level}");
        let (_, _, code) = s.sh("cp /bin/true /.talon/agent").await;
        assert_ne!(code, 0, "{level}: the init binary is read-only");
        let after: Vec<String> = sealed.iter().map(|p| sha(p)).collect();
        assert_eq!(before, after, "{level}: the sealed agent changed");
        assert_eq!(
            agent_before,
            sha(&agent_binary()),
            "{level}: the host agent binary changed"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn escape_no_inherited_fds() {
    for level in levels() {
        let mut s = level.sandbox("host", (1000, 256, 256)).await;
        // The listing opens one fd of its own (the directory); skip it.
        let (out, _, _) = s
            .sh("ls -l /proc/self/fd | awk 'NR>1 {print $9, $11}'")
            .await;
        let fds: Vec<&str> = out
            .lines()
            .filter(|l| !l.contains("/proc/"))
            .map(|l| l.split(' ').next().unwrap())
            .collect();
        assert_eq!(fds, vec!["0", "1", "2"], "{level}: {out}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn escape_masked_and_read_only_paths() {
    for level in levels() {
        let mut s = level.sandbox("host", (1000, 256, 256)).await;
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
            assert!(out.trim().is_empty(), "{level}: {p} is not masked: {out:?}");
        }
        for p in [
            "/proc/sys/kernel/hostname",
            "/proc/sysrq-trigger",
            "/proc/sys/vm/drop_caches",
        ] {
            let (_, _, code) = s.sh(&format!("echo 1 > {p}")).await;
            assert_ne!(code, 0, "{level}: {p} is writable");
        }
        let (_, _, code) = s.sh("touch /usr/bin/planted").await;
        assert_ne!(code, 0, "{level}: host /usr is writable");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn escape_privileged_syscalls_fail() {
    for level in levels() {
        let mut s = level.sandbox("host", (1000, 256, 256)).await;
        let (_, _, code) = s.sh("mount -t tmpfs x /tmp").await;
        assert_ne!(code, 0, "{level}: mount");
        // gVisor makes user namespaces in its own kernel: what must hold
        // there is that none reaches the host (the namespace test below).
        if level != Level::Gvisor {
            let (_, _, code) = s.sh("unshare -U true").await;
            assert_ne!(code, 0, "{level}: unshare -U");
        }
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
        assert_eq!(code, 0, "{level}: {err}");
        for part in out.split_whitespace() {
            let (name, rest) = part.split_once('=').unwrap();
            assert!(rest.starts_with("-1:"), "{level}: {name} succeeded: {out}");
            let errno: i32 = rest[3..].parse().unwrap();
            assert!(
                errno == libc::EPERM || errno == libc::ENOSYS,
                "{level}: {name} errno {errno}"
            );
        }
    }
}

/// The capability bounding set is the default one or less at every level.
/// In a container the workload runs with no_new_privs under our seccomp
/// filter (mode 2); under gVisor its syscalls are served by the sentry,
/// so those two must hold for the sentry, the gofer and systrap's stubs
/// on the host instead, which also run as an unprivileged host uid in a
/// user namespace of their own.
#[tokio::test(flavor = "multi_thread")]
async fn escape_capabilities_and_no_new_privs() {
    let host_userns = std::fs::read_link("/proc/self/ns/user").unwrap();
    for level in levels() {
        let mut s = level.sandbox("host", (1000, 256, 256)).await;
        let (out, _, _) = s
            .sh("grep -E '^(CapBnd|CapEff|NoNewPrivs|Seccomp):' /proc/self/status")
            .await;
        let field = |k: &str| {
            out.lines()
                .find(|l| l.starts_with(k))
                .unwrap_or_else(|| panic!("{level}: no {k} in {out}"))
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
            "{level}: capabilities beyond the default set: {bnd:x}"
        );
        if level != Level::Gvisor {
            assert_eq!(field("NoNewPrivs:"), "1", "{level}");
            assert_eq!(field("Seccomp:"), "2", "{level}");
            continue;
        }
        let on_host = common::gvisor_host_processes(&s.id);
        assert!(on_host.len() >= 2, "the sentry and the gofer: {on_host:?}");
        for p in &on_host {
            assert_eq!(
                (p.seccomp.as_str(), p.no_new_privs.as_str()),
                ("2", "1"),
                "gvisor: a host process of the sandbox is not confined: {p:?}"
            );
            assert_ne!(p.uid, 0, "gvisor: host root: {p:?}");
            assert_ne!(
                Path::new(&p.ns[0]),
                host_userns,
                "gvisor: in the host's user namespace: {p:?}"
            );
        }
    }
}

/// No namespace can be made or entered from a sandbox, by any raw
/// syscall with any namespace flag, under any runtime adapter: clone with
/// each flag (libcontainer 0.7 once read the clone rule's mask as 0 and
/// let `clone(CLONE_NEWUSER|CLONE_NEWNET)` through), clone3, unshare and
/// setns; and no vsock socket (the VM's host channel). A plain clone and
/// a unix socket still work. Under gVisor the namespaces are its kernel's
/// to make (they may succeed); what must hold there is that none is a
/// host namespace: with a user and network namespace held open inside,
/// every host process of the sandbox is still in the namespaces it had.
#[tokio::test(flavor = "multi_thread")]
async fn escape_namespace_creation_by_raw_syscall_under_every_level() {
    let probe = std::fs::read(common::static_probe("nsprobe")).unwrap();
    for level in levels() {
        let mut s = level.sandbox("host", (1000, 256, 256)).await;
        let before = (level == Level::Gvisor).then(|| common::gvisor_host_processes(&s.id));
        s.put("nsprobe", &probe, 0o755).await;
        let (out, err, code) = s.sh("/workspace/nsprobe").await;
        assert_eq!(code, 0, "{level}: {err}");
        let lines: Vec<&str> = out.lines().collect();
        // Under gVisor a setns child of a namespace kind it has no file
        // for (cgroup, time) dies without a line; the last line says the
        // probe ran to its end.
        let finished = if level == Level::Gvisor {
            lines.last() == Some(&"socket AF_UNIX ok") && lines.len() >= 30
        } else {
            lines.len() == 36
        };
        assert!(finished, "{level}: the probe did not finish:\n{out}{err}");
        for l in &lines {
            let controls = ["clone plain ", "socket AF_UNIX "];
            if controls.iter().any(|c| l.starts_with(c)) {
                assert!(l.ends_with(" ok"), "{level}: control failed: {l}");
                continue;
            }
            if level == Level::Gvisor && !l.starts_with("socket AF_VSOCK") {
                continue;
            }
            let errno: i32 = l
                .rsplit_once("errno=")
                .unwrap_or_else(|| panic!("{level}: allowed: {l}\n{out}"))
                .1
                .parse()
                .unwrap();
            let refused: &[i32] = if level == Level::Gvisor {
                // gVisor has no vsock family at all.
                &[libc::EPERM, libc::ENOSYS, libc::EAFNOSUPPORT]
            } else {
                &[libc::EPERM, libc::ENOSYS]
            };
            assert!(
                refused.contains(&errno),
                "{level}: {l} (one of {refused:?} expected)"
            );
        }
        let Some(before) = before else { continue };
        let (out, err, code) = s
            .sh("unshare -Urnm sh -c 'echo made; exec sleep 60' & \
                 for i in $(seq 100); do [ \"$(readlink /proc/$!/ns/net)\" != \"$(readlink /proc/self/ns/net)\" ] && break; sleep 0.05; done; \
                 readlink /proc/$!/ns/user /proc/self/ns/user")
            .await;
        assert_eq!(code, 0, "gvisor: {out}{err}");
        let ns: Vec<&str> = out.lines().filter(|l| l.starts_with("user:")).collect();
        assert!(
            out.contains("made") && ns.len() == 2 && ns[0] != ns[1],
            "gvisor: no namespace was made inside (the check below would prove nothing): {out}{err}"
        );
        let known: std::collections::HashSet<&String> =
            before.iter().flat_map(|p| p.ns.iter()).collect();
        let after = common::gvisor_host_processes(&s.id);
        for p in &after {
            for n in &p.ns {
                assert!(
                    known.contains(n),
                    "gvisor: a namespace made in the sandbox is on the host: {p:?} (before: {before:?})"
                );
            }
            assert_eq!(
                (p.seccomp.as_str(), p.no_new_privs.as_str()),
                ("2", "1"),
                "{p:?}"
            );
            assert_ne!(p.uid, 0, "{p:?}");
        }
    }
}

/// The agent (PID 1) is out of the workload's reach: not dumpable, so
/// /proc/1/mem, /proc/1/environ and its fds are closed to it; and its
/// stdio is /dev/null, never a host file (the probe read the bundle's
/// runtime.log through /proc/1/fd/1: the CVE-2024-21626 family). Under
/// every level (under gVisor, the host side is the sentry).
#[tokio::test(flavor = "multi_thread")]
async fn escape_proc_1_is_closed_to_the_workload() {
    for rt in levels() {
        let mut s = rt.sandbox("host", (500, 128, 64)).await;
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
        // Under gVisor the agent's fds are objects of the sentry, not host
        // fds (the lines above read them); the sentry's own host fds (its
        // log, the files directfs opens) are out of the workload's sight.
        if rt == Level::Gvisor {
            continue;
        }
        let pid = s.env.host.held(&s.id).unwrap().init.unwrap().0;
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
