/* What the exporters share: handing file descriptors to the Go test over a Unix socket.
 *
 * Protocol (one connection, the Go test listening):
 *   exporter -> test: one message, its payload a text line "<kind> <size> <words>\n" and its
 *                     ancillary data (SCM_RIGHTS) the exported descriptors, in an order the
 *                     kind fixes; word i of the memory holds i*3+1 (uint32).
 *   test -> exporter: one byte once the test has written word i = i*5+2 (and, for the Vulkan
 *                     exporter, signalled the timeline semaphore to 2).
 *   exporter -> test: "OK\n" when every word reads back as written, else "BAD <why>\n".
 */
#ifndef GPUACTOR_EXPORTER_COMMON_H
#define GPUACTOR_EXPORTER_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int connect_test(const char *path) {
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    if (s < 0) { perror("socket"); return -1; }
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof a.sun_path) { fprintf(stderr, "socket path too long\n"); return -1; }
    strcpy(a.sun_path, path);
    if (connect(s, (struct sockaddr *)&a, sizeof a) < 0) { perror("connect"); close(s); return -1; }
    return s;
}

/* send_fds sends line with the n descriptors in fds. */
static int send_fds(int s, const char *line, const int *fds, int n) {
    char ctl[CMSG_SPACE(sizeof(int) * 4)];
    memset(ctl, 0, sizeof ctl);
    struct iovec iov = {(void *)line, strlen(line)};
    struct msghdr m;
    memset(&m, 0, sizeof m);
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = ctl;
    m.msg_controllen = CMSG_SPACE(sizeof(int) * n);
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * n);
    memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
    if (sendmsg(s, &m, 0) < 0) { perror("sendmsg"); return -1; }
    return 0;
}

/* await_go waits for the test's byte. */
static int await_go(int s) {
    char b;
    if (read(s, &b, 1) != 1) { fprintf(stderr, "the test closed the socket\n"); return -1; }
    return 0;
}

/* verify checks word i == i*5+2 and reports to the test. */
static int verify(int s, const uint32_t *w, uint64_t words) {
    char out[128];
    int ok = 1;
    for (uint64_t i = 0; i < words; i++) {
        uint32_t want = (uint32_t)(i * 5 + 2);
        if (w[i] != want) {
            snprintf(out, sizeof out, "BAD word %llu is %u, want %u\n", (unsigned long long)i, w[i], want);
            ok = 0;
            break;
        }
    }
    if (ok) strcpy(out, "OK\n");
    if (write(s, out, strlen(out)) < 0) perror("write");
    return ok ? 0 : 1;
}

static void fill(uint32_t *w, uint64_t words) {
    for (uint64_t i = 0; i < words; i++) w[i] = (uint32_t)(i * 3 + 1);
}

#endif
