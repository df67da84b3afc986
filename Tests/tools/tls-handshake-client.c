/* The full-handshake client of `headwater-bench all`: CONNECTIONS threads, each connecting,
 * doing a full TLS handshake, sending one request with `Connection: close` and reading the response
 * to the server's close, over and over for SECONDS. Every handshake is full: no session is ever
 * offered (a new SSL object per connection, no client session cache, no tickets asked for).
 *
 * Why not wrk: with `Connection: close` wrk reconnects, but it keeps the TLS session on its
 * connection (SSL_clear) and offers it again, so after the first handshake per connection it
 * measures resumptions. And why not `openssl s_time -new`: one process per connection at a time,
 * with a process start each, and whole seconds of wall time.
 *
 *   cc -O2 -o tls-handshake-client tls-handshake-client.c -lssl -lcrypto -lpthread
 *   ./tls-handshake-client 127.0.0.1 8443 /live/demo/v1.m3u8 10 64 'Accept-Encoding: gzip'
 *
 * Prints one line as wrk's origin-bench.lua does (microseconds; errors by kind; `status` counts
 * responses that are not 2xx), which the bench reads the same way:
 *   HEADWATER requests=… duration_us=… bytes=… p50_us=… p99_us=… connect=… read=… write=… timeout=… status=… */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_SAMPLES (1 << 16) /* latencies kept per thread; the counts go on */

struct worker {
    pthread_t thread;
    long requests, bytes, connect_errors, read_errors, write_errors, timeouts, status_errors;
    long samples;
    unsigned *latencies;
};

static SSL_CTX *context;
static struct sockaddr_in address;
static char request[4096];
static size_t request_length;
static double deadline;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* One connection, one full handshake, one request and its response. */
static void exchange(struct worker *w) {
    double started = now();
    int fd = socket(AF_INET, SOCK_STREAM, 0), on = 1;
    struct timeval timeout = {.tv_sec = 5};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        w->connect_errors++;
        if (fd >= 0) close(fd);
        return;
    }
    SSL *ssl = SSL_new(context);
    SSL_set_fd(ssl, fd);
    if (SSL_connect(ssl) != 1) {
        if (errno == EAGAIN) w->timeouts++; else w->connect_errors++;
    } else if (SSL_write(ssl, request, (int)request_length) != (int)request_length) {
        w->write_errors++;
    } else {
        char buffer[16384], status[16] = {0};
        long received = 0;
        int n;
        while ((n = SSL_read(ssl, buffer, sizeof buffer)) > 0) {
            if (received < 12) memcpy(status + received, buffer, (size_t)(n < 12 - received ? n : 12 - received));
            received += n;
        }
        int error = SSL_get_error(ssl, n);
        if (error != SSL_ERROR_ZERO_RETURN && !(error == SSL_ERROR_SYSCALL && received > 0)) {
            if (errno == EAGAIN) w->timeouts++; else w->read_errors++;
        } else {
            w->requests++;
            w->bytes += received;
            if (strncmp(status + 8, " 2", 2) != 0) w->status_errors++;
            if (w->samples < MAX_SAMPLES) w->latencies[w->samples++] = (unsigned)((now() - started) * 1e6);
        }
    }
    SSL_shutdown(ssl);
    SSL_free(ssl);
    close(fd);
}

static void *work(void *argument) {
    struct worker *w = argument;
    while (now() < deadline) exchange(w);
    return NULL;
}

static int ascending(const void *a, const void *b) {
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: %s HOST PORT PATH SECONDS CONNECTIONS [HEADER...]\n", argv[0]);
        return 64;
    }
    int seconds = atoi(argv[4]), connections = atoi(argv[5]);
    address.sin_family = AF_INET;
    address.sin_port = htons((uint16_t)atoi(argv[2]));
    if (inet_pton(AF_INET, argv[1], &address.sin_addr) != 1 || seconds <= 0 || connections <= 0) {
        fprintf(stderr, "bad HOST, SECONDS or CONNECTIONS\n");
        return 64;
    }
    int length = snprintf(request, sizeof request, "GET %s HTTP/1.1\r\nHost: %s:%s\r\n", argv[3], argv[1], argv[2]);
    for (int i = 6; i < argc; i++) length += snprintf(request + length, sizeof request - (size_t)length, "%s\r\n", argv[i]);
    length += snprintf(request + length, sizeof request - (size_t)length, "Connection: close\r\n\r\n");
    request_length = (size_t)length;

    context = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_verify(context, SSL_VERIFY_NONE, NULL); /* as wrk; the handshake's signature is still checked */
    SSL_CTX_set_session_cache_mode(context, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_num_tickets(context, 0);
    SSL_CTX_set_options(context, SSL_OP_NO_TICKET);
#ifdef SSL_OP_IGNORE_UNEXPECTED_EOF
    SSL_CTX_set_options(context, SSL_OP_IGNORE_UNEXPECTED_EOF); /* a close without close_notify ends a response too */
#endif
    signal(SIGPIPE, SIG_IGN);

    struct worker *workers = calloc((size_t)connections, sizeof *workers);
    double started = now();
    deadline = started + seconds;
    for (int i = 0; i < connections; i++) {
        workers[i].latencies = malloc(MAX_SAMPLES * sizeof(unsigned));
        pthread_create(&workers[i].thread, NULL, work, &workers[i]);
    }
    struct worker total = {0};
    total.latencies = malloc((size_t)connections * MAX_SAMPLES * sizeof(unsigned));
    for (int i = 0; i < connections; i++) {
        struct worker *w = &workers[i];
        pthread_join(w->thread, NULL);
        total.requests += w->requests, total.bytes += w->bytes, total.connect_errors += w->connect_errors;
        total.read_errors += w->read_errors, total.write_errors += w->write_errors, total.timeouts += w->timeouts;
        total.status_errors += w->status_errors;
        memcpy(total.latencies + total.samples, w->latencies, (size_t)w->samples * sizeof(unsigned));
        total.samples += w->samples;
    }
    double elapsed = now() - started;
    qsort(total.latencies, (size_t)total.samples, sizeof(unsigned), ascending);
    unsigned p50 = total.samples ? total.latencies[total.samples / 2] : 0;
    unsigned p99 = total.samples ? total.latencies[(long)(total.samples * 0.99)] : 0;
    printf("HEADWATER requests=%ld duration_us=%ld bytes=%ld p50_us=%u p99_us=%u connect=%ld read=%ld write=%ld timeout=%ld status=%ld\n",
           total.requests, (long)(elapsed * 1e6), total.bytes, p50, p99, total.connect_errors, total.read_errors,
           total.write_errors, total.timeouts, total.status_errors);
    return 0;
}
