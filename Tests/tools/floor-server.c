/* The floor of `headwater-bench all`: the least an HTTP/1.1 keep-alive server can do per request on
 * this machine, to read Headwater's CPU per request against. One thread, epoll (level-triggered),
 * non-blocking accept; each request is read up to its blank line ("\r\n\r\n", no body: GETs only)
 * and answered with the same bytes from memory: the file given, which the bench fills with
 * Headwater's own response (head and gzip body) to the shared playlist. No parsing, no routing, no
 * logging, no clock: whatever Headwater spends above this is HTTP and origin work.
 *
 *   cc -O2 -o floor-server floor-server.c && taskset -c 0 ./floor-server PORT RESPONSE-FILE [hold]
 *
 * Listens on 127.0.0.1:PORT until killed. Pipelined requests are answered in order.
 *
 * With `hold`, the floor of a blocking-reload release: a request whose target has a query (`?`)
 * is held, unanswered, until the process gets SIGUSR1; then every held request on every
 * connection is answered at once, as one publish releases Headwater's. Others are answered at once. */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

struct conn {
    unsigned matched;  /* bytes of "\r\n\r\n" seen at the end of what was read */
    unsigned queued;   /* complete requests not yet answered */
    unsigned held;     /* complete requests held until SIGUSR1 (hold mode) */
    unsigned past_line; /* the current request's line has ended (its first '\r' was read) */
    unsigned query;    /* the current request's target has a query */
    size_t sent;       /* bytes of the current answer already written */
};

static char *response;
static size_t response_length;
static struct conn *conns;
static int epoll_fd;
static int hold_mode;
static int max_fd;

static void drop(int fd) {
    close(fd); /* also leaves the epoll set */
    memset(&conns[fd], 0, sizeof conns[fd]);
}

/* Writes queued answers until done or the socket is full (then waits for EPOLLOUT). */
static int flush(int fd) {
    struct conn *c = &conns[fd];
    while (c->queued > 0) {
        ssize_t n = send(fd, response + c->sent, response_length - c->sent, MSG_NOSIGNAL);
        if (n < 0) return errno == EAGAIN ? 1 : -1;
        c->sent += (size_t)n;
        if (c->sent == response_length) { c->queued--; c->sent = 0; }
    }
    return 0;
}

static void serve(int fd, uint32_t events) {
    struct conn *c = &conns[fd];
    char buffer[16384];
    if ((events & (EPOLLERR | EPOLLHUP)) && !(events & EPOLLIN)) { drop(fd); return; }
    if (events & EPOLLIN) {
        ssize_t n = read(fd, buffer, sizeof buffer);
        if (n == 0 || (n < 0 && errno != EAGAIN)) { drop(fd); return; }
        for (ssize_t i = 0; i < n; i++) { /* a tiny state machine for "\r\n\r\n" */
            char expected = (c->matched % 2 == 0) ? '\r' : '\n';
            if (!c->past_line) {
                if (buffer[i] == '?') c->query = 1;
                if (buffer[i] == '\r') c->past_line = 1;
            }
            c->matched = buffer[i] == expected ? c->matched + 1 : (buffer[i] == '\r' ? 1 : 0);
            if (c->matched == 4) {
                if (hold_mode && c->query) c->held++; else c->queued++;
                c->matched = 0;
                c->past_line = 0;
                c->query = 0;
            }
        }
    }
    int pending = flush(fd);
    if (pending < 0) { drop(fd); return; }
    struct epoll_event change = {.events = EPOLLIN | (pending ? EPOLLOUT : 0), .data.fd = fd};
    if (pending || (events & EPOLLOUT)) epoll_ctl(epoll_fd, EPOLL_CTL_MOD, fd, &change);
}

/* SIGUSR1 in hold mode: every held request is answered now. */
static void release(void) {
    for (int fd = 0; fd <= max_fd; fd++) {
        struct conn *c = &conns[fd];
        if (c->held == 0) continue;
        c->queued += c->held;
        c->held = 0;
        int pending = flush(fd);
        if (pending < 0) { drop(fd); continue; }
        struct epoll_event change = {.events = EPOLLIN | EPOLLOUT, .data.fd = fd};
        if (pending) epoll_ctl(epoll_fd, EPOLL_CTL_MOD, fd, &change);
    }
}

int main(int argc, char **argv) {
    hold_mode = argc == 4 && strcmp(argv[3], "hold") == 0;
    if (argc != 3 && !hold_mode) { fprintf(stderr, "usage: %s PORT RESPONSE-FILE [hold]\n", argv[0]); return 64; }
    FILE *file = fopen(argv[2], "rb");
    if (!file) { perror(argv[2]); return 66; }
    fseek(file, 0, SEEK_END);
    response_length = (size_t)ftell(file);
    rewind(file);
    response = malloc(response_length);
    if (!response || fread(response, 1, response_length, file) != response_length) { perror("read"); return 66; }
    fclose(file);
    signal(SIGPIPE, SIG_IGN);

    struct rlimit limit;
    getrlimit(RLIMIT_NOFILE, &limit);
    conns = calloc(limit.rlim_cur, sizeof *conns);
    int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), on = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1])),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (!conns || bind(listener, (struct sockaddr *)&address, sizeof address) || listen(listener, 4096)) {
        perror("listen");
        return 71;
    }
    epoll_fd = epoll_create1(0);
    struct epoll_event event = {.events = EPOLLIN, .data.fd = listener};
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listener, &event);

    int signals = -1;
    if (hold_mode) {
        sigset_t usr1;
        sigemptyset(&usr1);
        sigaddset(&usr1, SIGUSR1);
        sigprocmask(SIG_BLOCK, &usr1, NULL);
        signals = signalfd(-1, &usr1, SFD_NONBLOCK);
        struct epoll_event on_signal = {.events = EPOLLIN, .data.fd = signals};
        epoll_ctl(epoll_fd, EPOLL_CTL_ADD, signals, &on_signal);
    }

    struct epoll_event ready[256];
    for (;;) {
        int count = epoll_wait(epoll_fd, ready, 256, -1);
        for (int i = 0; i < count; i++) {
            int fd = ready[i].data.fd;
            if (fd == signals) {
                struct signalfd_siginfo info;
                while (read(signals, &info, sizeof info) == sizeof info) release();
                continue;
            }
            if (fd != listener) { serve(fd, ready[i].events); continue; }
            int client;
            while ((client = accept4(listener, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                if ((rlim_t)client >= limit.rlim_cur) { close(client); continue; }
                setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on); /* as nginx and Headwater do */
                if (client > max_fd) max_fd = client;
                struct epoll_event added = {.events = EPOLLIN, .data.fd = client};
                epoll_ctl(epoll_fd, EPOLL_CTL_ADD, client, &added);
            }
        }
    }
}
