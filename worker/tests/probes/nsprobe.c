/* Tries to create or enter every kind of namespace by raw syscall (never
 * through a libc wrapper, which may choose another call), and a vsock
 * socket, and prints one line per attempt: "<call> <flag> ok" or
 * "<call> <flag> errno=<n>". Built static by the escape tests so that it
 * runs in any image. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x80
#endif
#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

struct flag { const char *name; unsigned long value; const char *ns; };

static const struct flag FLAGS[] = {
    {"NEWNS", CLONE_NEWNS, "mnt"},         {"NEWCGROUP", CLONE_NEWCGROUP, "cgroup"},
    {"NEWUTS", CLONE_NEWUTS, "uts"},       {"NEWIPC", CLONE_NEWIPC, "ipc"},
    {"NEWUSER", CLONE_NEWUSER, "user"},    {"NEWPID", CLONE_NEWPID, "pid"},
    {"NEWNET", CLONE_NEWNET, "net"},       {"NEWTIME", CLONE_NEWTIME, "time"},
};

struct clone_args_v0 {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

static void report(const char *call, const char *flag, long r) {
    if (r < 0)
        printf("%s %s errno=%d\n", call, flag, errno);
    else
        printf("%s %s ok\n", call, flag);
    fflush(stdout);
}

/* In a child: exit at once. In the parent: reap it. */
static long after_fork(long r) {
    if (r == 0)
        _exit(0);
    if (r > 0)
        waitpid((pid_t)r, NULL, __WALL);
    return r;
}

/* Each attempt runs in a child of its own, so that one that succeeds
 * (an unshare, say) cannot change what the next one sees. */
#define ATTEMPT(body)                                   \
    do {                                                \
        pid_t c_ = fork();                              \
        if (c_ == 0) {                                  \
            body;                                       \
            _exit(0);                                   \
        }                                               \
        if (c_ > 0)                                     \
            waitpid(c_, NULL, 0);                       \
        else                                            \
            printf("fork errno=%d\n", errno);           \
    } while (0)

int main(void) {
    for (size_t i = 0; i < sizeof FLAGS / sizeof *FLAGS; i++) {
        const struct flag *f = &FLAGS[i];
        /* clone(2)'s low byte is the exit signal, so CLONE_NEWTIME can't be
         * asked for there: only clone3 and unshare take it. */
        if (f->value != CLONE_NEWTIME)
            ATTEMPT(report("clone", f->name, after_fork(syscall(SYS_clone, f->value | SIGCHLD, 0, 0, 0, 0))));
        ATTEMPT({
            struct clone_args_v0 a;
            memset(&a, 0, sizeof a);
            a.flags = f->value;
            a.exit_signal = SIGCHLD;
            report("clone3", f->name, after_fork(syscall(SYS_clone3, &a, sizeof a)));
        });
        ATTEMPT(report("unshare", f->name, syscall(SYS_unshare, f->value)));
        ATTEMPT({
            char path[64];
            snprintf(path, sizeof path, "/proc/self/ns/%s", f->ns);
            int fd = open(path, O_RDONLY | O_CLOEXEC);
            if (fd >= 0)
                report("setns", f->name, syscall(SYS_setns, fd, f->value));
            else
                printf("setns %s unopened errno=%d\n", f->name, errno);
        });
    }
    /* Every flag at once, the probe's original case. */
    ATTEMPT(report("clone", "NEWUSER|NEWNET",
                   after_fork(syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWNET | SIGCHLD, 0, 0, 0, 0))));
    /* A plain fork and a thread through clone still work (the controls). */
    ATTEMPT(report("clone", "plain", after_fork(syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0))));
    ATTEMPT(report("socket", "AF_VSOCK", syscall(SYS_socket, AF_VSOCK, SOCK_STREAM, 0)));
    ATTEMPT(report("socket", "AF_VSOCK_DGRAM", syscall(SYS_socket, AF_VSOCK, SOCK_DGRAM, 0)));
    ATTEMPT(report("socket", "AF_UNIX", syscall(SYS_socket, AF_UNIX, SOCK_STREAM, 0)));
    return 0;
}
