//! talon-agent: PID 1 inside every sandbox.
//!
//! This first piece is the init duty, as tini does it: run the given
//! command as a child, forward termination signals to it, reap every
//! orphan that gets reparented to us, and exit with the child's status.
//! The gRPC service over the bind-mounted unix socket (processes, PTY,
//! files, ports; see proto/talon/agent/v1) is built on top of this in the
//! worker-runtime issue.

use std::ffi::CString;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<String> = match args.first().map(String::as_str) {
        Some("--") => args[1..].to_vec(),
        _ => args,
    };
    if args.is_empty() {
        eprintln!("usage: talon-agent [--] COMMAND [ARG]...");
        std::process::exit(2);
    }
    std::process::exit(run(&args));
}

extern "C" fn forward(sig: libc::c_int) {
    let child = CHILD.load(std::sync::atomic::Ordering::SeqCst);
    if child > 0 {
        // SAFETY: kill is async-signal-safe.
        unsafe { libc::kill(child, sig) };
    }
}

static CHILD: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

fn run(args: &[String]) -> i32 {
    let argv: Vec<CString> = match args.iter().map(|a| CString::new(a.as_bytes())).collect() {
        Ok(v) => v,
        Err(_) => {
            eprintln!("talon-agent: argument contains NUL");
            return 2;
        }
    };
    let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    // SAFETY: fork in a single-threaded process; the child only calls
    // async-signal-safe functions before execvp.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        eprintln!("talon-agent: fork: {}", std::io::Error::last_os_error());
        return 1;
    }
    if pid == 0 {
        // SAFETY: argv outlives the call; on failure we _exit.
        unsafe {
            libc::execvp(ptrs[0], ptrs.as_ptr());
            libc::_exit(127);
        }
    }
    CHILD.store(pid, std::sync::atomic::Ordering::SeqCst);
    for sig in [
        libc::SIGTERM,
        libc::SIGINT,
        libc::SIGHUP,
        libc::SIGQUIT,
        libc::SIGUSR1,
        libc::SIGUSR2,
    ] {
        // SAFETY: installing a handler that only calls kill.
        unsafe { libc::signal(sig, forward as *const () as libc::sighandler_t) };
    }
    loop {
        let mut status = 0;
        // SAFETY: plain wait for any child; orphans are reaped here too.
        let got = unsafe { libc::waitpid(-1, &mut status, 0) };
        if got < 0 {
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return 1;
        }
        if got == pid {
            return if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status)
            } else if libc::WIFSIGNALED(status) {
                128 + libc::WTERMSIG(status)
            } else {
                1
            };
        }
    }
}
