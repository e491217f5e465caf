/* Fills what a sandbox can write, to show where it stops.
 *   fill bytes DIR...   writes 1 MiB chunks into DIR/.fill until a write
 *                       fails; prints "DIR bytes=N errno=E"
 *   fill inodes DIR     creates empty files DIR/.i/N until one fails;
 *                       prints "DIR inodes=N errno=E"
 *   fill clean DIR...   removes DIR/.fill
 * Built static by the escape tests, so it runs in any image. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char chunk[1 << 20];

static void bytes(const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/.fill", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
        printf("%s bytes=0 errno=%d\n", dir, errno);
        return;
    }
    long long total = 0;
    int err = 0;
    for (;;) {
        ssize_t n = write(fd, chunk, sizeof chunk);
        if (n < 0) {
            err = errno;
            break;
        }
        total += n;
        if (n < (ssize_t)sizeof chunk) {
            /* A short write: the next one says why. */
            continue;
        }
        if (total > (8LL << 30)) /* never past 8 GiB, whatever happens */
            break;
    }
    if (err == 0 && fsync(fd) != 0)
        err = errno;
    close(fd);
    printf("%s bytes=%lld errno=%d\n", dir, total, err);
    fflush(stdout);
}

static void inodes(const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/.i", dir);
    mkdir(path, 0700);
    long n = 0;
    int err = 0;
    for (; n < 10000000; n++) {
        snprintf(path, sizeof path, "%s/.i/%ld", dir, n);
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
        if (fd < 0) {
            err = errno;
            break;
        }
        close(fd);
    }
    printf("%s inodes=%ld errno=%d\n", dir, n, err);
    fflush(stdout);
}

int main(int argc, char **argv) {
    memset(chunk, 'x', sizeof chunk);
    if (argc < 3)
        return 2;
    for (int i = 2; i < argc; i++) {
        char path[4096];
        if (strcmp(argv[1], "bytes") == 0) {
            bytes(argv[i]);
        } else if (strcmp(argv[1], "clean") == 0) {
            snprintf(path, sizeof path, "%s/.fill", argv[i]);
            unlink(path);
        } else {
            inodes(argv[i]);
        }

    }
    return 0;
}
