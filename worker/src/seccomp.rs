//! The sandbox seccomp profile: an allowlist after Docker's default, with
//! EPERM for everything else. Deliberately absent (so denied): keyctl,
//! add_key, request_key, bpf, mount, umount2, pivot_root, ptrace,
//! process_vm_readv/writev, kexec_*, init_module, finit_module,
//! open_by_handle_at, userfaultfd, io_uring_*, unshare, setns, perf_event_open,
//! socketcall (its arguments are in memory, out of a filter's sight) and
//! the x32 ABI (its architecture is not listed). clone3 answers ENOSYS
//! (its flags are in memory too), so libc falls back to clone, whose
//! namespace flags are refused; socket is allowed for every family but
//! AF_VSOCK, as in Docker's profile. arch_prctl is allowed: glibc's TLS
//! setup needs it (the seed's "Cannot allocate TLS block" regression).
//!
//! The clone rule is a masked-equal comparison, and runtimes disagree on
//! which of its two values is the mask: the OCI spec, runc and crun (and
//! libseccomp's own order) read `value` as the mask and `valueTwo` as the
//! datum; libcontainer 0.7 reads them the other way round, so Docker's
//! form of the rule (mask in `value`, datum 0) became a mask of 0 there,
//! which matches every clone whatever its flags. Each adapter says how it
//! reads them ([`MaskedEq`]) and gets the rule in its own form. Written in
//! the other adapter's form, the rule matches no clone at all: a mismatch
//! fails closed (nothing forks), never open. The escape suite proves the
//! rule with raw syscalls under every adapter.

use oci_spec::runtime::{
    Arch, LinuxSeccomp, LinuxSeccompAction, LinuxSeccompArgBuilder, LinuxSeccompBuilder,
    LinuxSeccompOperator, LinuxSyscall, LinuxSyscallBuilder,
};

pub const ALLOWED: &[&str] = &[
    "accept",
    "accept4",
    "access",
    "adjtimex",
    "alarm",
    "arch_prctl",
    "bind",
    "brk",
    "cachestat",
    "capget",
    "capset",
    "chdir",
    "chmod",
    "chown",
    "chown32",
    "chroot",
    "clock_adjtime",
    "clock_adjtime64",
    "clock_getres",
    "clock_getres_time64",
    "clock_gettime",
    "clock_gettime64",
    "clock_nanosleep",
    "clock_nanosleep_time64",
    "close",
    "close_range",
    "connect",
    "copy_file_range",
    "creat",
    "dup",
    "dup2",
    "dup3",
    "epoll_create",
    "epoll_create1",
    "epoll_ctl",
    "epoll_ctl_old",
    "epoll_pwait",
    "epoll_pwait2",
    "epoll_wait",
    "epoll_wait_old",
    "eventfd",
    "eventfd2",
    "execve",
    "execveat",
    "exit",
    "exit_group",
    "faccessat",
    "faccessat2",
    "fadvise64",
    "fadvise64_64",
    "fallocate",
    "fanotify_mark",
    "fchdir",
    "fchmod",
    "fchmodat",
    "fchmodat2",
    "fchown",
    "fchown32",
    "fchownat",
    "fcntl",
    "fcntl64",
    "fdatasync",
    "fgetxattr",
    "flistxattr",
    "flock",
    "fork",
    "fremovexattr",
    "fsetxattr",
    "fstat",
    "fstat64",
    "fstatat64",
    "fstatfs",
    "fstatfs64",
    "fsync",
    "ftruncate",
    "ftruncate64",
    "futex",
    "futex_requeue",
    "futex_time64",
    "futex_wait",
    "futex_waitv",
    "futex_wake",
    "futimesat",
    "get_mempolicy",
    "get_robust_list",
    "get_thread_area",
    "getcpu",
    "getcwd",
    "getdents",
    "getdents64",
    "getegid",
    "getegid32",
    "geteuid",
    "geteuid32",
    "getgid",
    "getgid32",
    "getgroups",
    "getgroups32",
    "getitimer",
    "getpeername",
    "getpgid",
    "getpgrp",
    "getpid",
    "getppid",
    "getpriority",
    "getrandom",
    "getresgid",
    "getresgid32",
    "getresuid",
    "getresuid32",
    "getrlimit",
    "getrusage",
    "getsid",
    "getsockname",
    "getsockopt",
    "gettid",
    "gettimeofday",
    "getuid",
    "getuid32",
    "getxattr",
    "inotify_add_watch",
    "inotify_init",
    "inotify_init1",
    "inotify_rm_watch",
    "io_cancel",
    "io_destroy",
    "io_getevents",
    "io_pgetevents",
    "io_pgetevents_time64",
    "io_setup",
    "io_submit",
    "ioctl",
    "ioprio_get",
    "ioprio_set",
    "ipc",
    "kill",
    "landlock_add_rule",
    "landlock_create_ruleset",
    "landlock_restrict_self",
    "lchown",
    "lchown32",
    "lgetxattr",
    "link",
    "linkat",
    "listen",
    "listxattr",
    "llistxattr",
    "_llseek",
    "lremovexattr",
    "lseek",
    "lsetxattr",
    "lstat",
    "lstat64",
    "madvise",
    "map_shadow_stack",
    "mbind",
    "membarrier",
    "memfd_create",
    "memfd_secret",
    "mincore",
    "mkdir",
    "mkdirat",
    "mknod",
    "mknodat",
    "mlock",
    "mlock2",
    "mlockall",
    "mmap",
    "mmap2",
    "mprotect",
    "mq_getsetattr",
    "mq_notify",
    "mq_open",
    "mq_timedreceive",
    "mq_timedreceive_time64",
    "mq_timedsend",
    "mq_timedsend_time64",
    "mq_unlink",
    "mremap",
    "msgctl",
    "msgget",
    "msgrcv",
    "msgsnd",
    "msync",
    "munlock",
    "munlockall",
    "munmap",
    "name_to_handle_at",
    "nanosleep",
    "newfstatat",
    "_newselect",
    "open",
    "openat",
    "openat2",
    "pause",
    "pidfd_open",
    "pidfd_send_signal",
    "pipe",
    "pipe2",
    "pkey_alloc",
    "pkey_free",
    "pkey_mprotect",
    "poll",
    "ppoll",
    "ppoll_time64",
    "prctl",
    "pread64",
    "preadv",
    "preadv2",
    "prlimit64",
    "process_mrelease",
    "pselect6",
    "pselect6_time64",
    "pwrite64",
    "pwritev",
    "pwritev2",
    "read",
    "readahead",
    "readlink",
    "readlinkat",
    "readv",
    "recv",
    "recvfrom",
    "recvmmsg",
    "recvmmsg_time64",
    "recvmsg",
    "remap_file_pages",
    "removexattr",
    "rename",
    "renameat",
    "renameat2",
    "restart_syscall",
    "rmdir",
    "rseq",
    "rt_sigaction",
    "rt_sigpending",
    "rt_sigprocmask",
    "rt_sigqueueinfo",
    "rt_sigreturn",
    "rt_sigsuspend",
    "rt_sigtimedwait",
    "rt_sigtimedwait_time64",
    "rt_tgsigqueueinfo",
    "sched_get_priority_max",
    "sched_get_priority_min",
    "sched_getaffinity",
    "sched_getattr",
    "sched_getparam",
    "sched_getscheduler",
    "sched_rr_get_interval",
    "sched_rr_get_interval_time64",
    "sched_setaffinity",
    "sched_setattr",
    "sched_setparam",
    "sched_setscheduler",
    "sched_yield",
    "seccomp",
    "select",
    "semctl",
    "semget",
    "semop",
    "semtimedop",
    "semtimedop_time64",
    "send",
    "sendfile",
    "sendfile64",
    "sendmmsg",
    "sendmsg",
    "sendto",
    "set_mempolicy",
    "set_robust_list",
    "set_thread_area",
    "set_tid_address",
    "setfsgid",
    "setfsgid32",
    "setfsuid",
    "setfsuid32",
    "setgid",
    "setgid32",
    "setgroups",
    "setgroups32",
    "setitimer",
    "setpgid",
    "setpriority",
    "setregid",
    "setregid32",
    "setresgid",
    "setresgid32",
    "setresuid",
    "setresuid32",
    "setreuid",
    "setreuid32",
    "setrlimit",
    "setsid",
    "setsockopt",
    "setuid",
    "setuid32",
    "setxattr",
    "shmat",
    "shmctl",
    "shmdt",
    "shmget",
    "shutdown",
    "sigaltstack",
    "signalfd",
    "signalfd4",
    "sigprocmask",
    "sigreturn",
    "socketpair",
    "splice",
    "stat",
    "stat64",
    "statfs",
    "statfs64",
    "statx",
    "symlink",
    "symlinkat",
    "sync",
    "sync_file_range",
    "syncfs",
    "sysinfo",
    "tee",
    "tgkill",
    "time",
    "timer_create",
    "timer_delete",
    "timer_getoverrun",
    "timer_gettime",
    "timer_gettime64",
    "timer_settime",
    "timer_settime64",
    "timerfd_create",
    "timerfd_gettime",
    "timerfd_gettime64",
    "timerfd_settime",
    "timerfd_settime64",
    "times",
    "tkill",
    "truncate",
    "truncate64",
    "ugetrlimit",
    "umask",
    "uname",
    "unlink",
    "unlinkat",
    "utime",
    "utimensat",
    "utimensat_time64",
    "utimes",
    "vfork",
    "vmsplice",
    "wait4",
    "waitid",
    "waitpid",
    "write",
    "writev",
];

/// Denied by name even if a later edit adds them above; a unit test keeps
/// the two lists apart.
pub const DENIED: &[&str] = &[
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "mount",
    "umount",
    "umount2",
    "pivot_root",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "open_by_handle_at",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "unshare",
    "setns",
    "perf_event_open",
    "clone3",
    "fsopen",
    "fsmount",
    "move_mount",
    "open_tree",
    "mount_setattr",
    "socketcall",
];

/// Namespace flags clone(2) may not carry: NEWNS, NEWCGROUP, NEWUTS,
/// NEWIPC, NEWUSER, NEWPID, NEWNET (NEWTIME is clone3's and unshare's only).
pub const CLONE_NS_FLAGS: u64 = 0x7E02_0000;
/// The one socket family refused: a VM's host channel.
const AF_VSOCK: u64 = 40;

/// How a runtime reads the two values of `SCMP_CMP_MASKED_EQ`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaskedEq {
    /// `value` is the mask, `valueTwo` the datum: the OCI spec, runc, crun.
    MaskInValue,
    /// `value` is the datum, `valueTwo` the mask: libcontainer 0.7.
    DatumInValue,
}
/// personality(2) values Docker allows.
const PERSONALITIES: &[u64] = &[0x0, 0x8, 0x20000, 0x20008, 0xffff_ffff];

fn rule(names: &[&str], action: LinuxSeccompAction) -> LinuxSyscall {
    LinuxSyscallBuilder::default()
        .names(names.iter().map(|s| s.to_string()).collect::<Vec<_>>())
        .action(action)
        .build()
        .expect("syscall rule")
}

/// The profile, with its masked-equal rule in the form `form` reads.
pub fn profile(form: MaskedEq) -> LinuxSeccomp {
    let mut syscalls = vec![rule(ALLOWED, LinuxSeccompAction::ScmpActAllow)];
    // clone without namespace flags (arg 0 on x86_64 and x86):
    // (flags & CLONE_NS_FLAGS) == 0.
    let (value, value_two) = match form {
        MaskedEq::MaskInValue => (CLONE_NS_FLAGS, 0),
        MaskedEq::DatumInValue => (0, CLONE_NS_FLAGS),
    };
    syscalls.push(
        LinuxSyscallBuilder::default()
            .names(vec!["clone".to_string()])
            .action(LinuxSeccompAction::ScmpActAllow)
            .args(vec![
                LinuxSeccompArgBuilder::default()
                    .index(0usize)
                    .value(value)
                    .value_two(value_two)
                    .op(LinuxSeccompOperator::ScmpCmpMaskedEq)
                    .build()
                    .expect("arg"),
            ])
            .build()
            .expect("clone rule"),
    );
    // socket of any family but AF_VSOCK.
    syscalls.push(
        LinuxSyscallBuilder::default()
            .names(vec!["socket".to_string()])
            .action(LinuxSeccompAction::ScmpActAllow)
            .args(vec![
                LinuxSeccompArgBuilder::default()
                    .index(0usize)
                    .value(AF_VSOCK)
                    .op(LinuxSeccompOperator::ScmpCmpNe)
                    .build()
                    .expect("arg"),
            ])
            .build()
            .expect("socket rule"),
    );
    for p in PERSONALITIES {
        syscalls.push(
            LinuxSyscallBuilder::default()
                .names(vec!["personality".to_string()])
                .action(LinuxSeccompAction::ScmpActAllow)
                .args(vec![
                    LinuxSeccompArgBuilder::default()
                        .index(0usize)
                        .value(*p)
                        .op(LinuxSeccompOperator::ScmpCmpEq)
                        .build()
                        .expect("arg"),
                ])
                .build()
                .expect("personality rule"),
        );
    }
    syscalls.push(
        LinuxSyscallBuilder::default()
            .names(vec!["clone3".to_string()])
            .action(LinuxSeccompAction::ScmpActErrno)
            .errno_ret(libc::ENOSYS as u32)
            .build()
            .expect("clone3 rule"),
    );
    LinuxSeccompBuilder::default()
        .default_action(LinuxSeccompAction::ScmpActErrno)
        .default_errno_ret(libc::EPERM as u32)
        .architectures(vec![Arch::ScmpArchX86_64, Arch::ScmpArchX86])
        .syscalls(syscalls)
        .build()
        .expect("seccomp profile")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn denied_calls_are_not_allowed() {
        for d in DENIED {
            assert!(!ALLOWED.contains(d), "{d} is both allowed and denied");
        }
        assert!(
            ALLOWED.contains(&"arch_prctl"),
            "glibc TLS needs arch_prctl"
        );
        let j = serde_json::to_value(profile(MaskedEq::MaskInValue)).unwrap();
        assert_eq!(j["defaultAction"], "SCMP_ACT_ERRNO");
        let archs = j["architectures"].as_array().unwrap();
        assert!(
            !archs.iter().any(|a| a == "SCMP_ARCH_X32"),
            "x32 must not be allowed"
        );
        let clone3 = j["syscalls"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["names"][0] == "clone3")
            .unwrap();
        assert_eq!(clone3["errnoRet"], libc::ENOSYS);
        for name in ["clone", "socket", "socketcall"] {
            assert!(
                !ALLOWED.contains(&name),
                "{name} is allowed unconditionally"
            );
        }
    }

    /// The clone rule says "no namespace flag" in each adapter's reading.
    #[test]
    fn each_form_puts_the_mask_where_its_runtime_reads_it() {
        let clone_arg = |form| {
            let j = serde_json::to_value(profile(form)).unwrap();
            let rule = j["syscalls"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["names"][0] == "clone")
                .unwrap()
                .clone();
            let a = &rule["args"][0];
            assert_eq!(a["op"], "SCMP_CMP_MASKED_EQ");
            (
                a["value"].as_u64().unwrap(),
                a["valueTwo"].as_u64().unwrap(),
            )
        };
        assert_eq!(clone_arg(MaskedEq::MaskInValue), (CLONE_NS_FLAGS, 0));
        assert_eq!(clone_arg(MaskedEq::DatumInValue), (0, CLONE_NS_FLAGS));
    }
}
