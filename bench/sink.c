/* sendat-sink: a webhook receiver for the benchmark. Answers every POST with 204 at once and
 * remembers when it arrived (CLOCK_REALTIME, taken when the request's headers are complete)
 * and its webhook-id. libmicrohttpd with epoll and a pool of threads; records go into one
 * preallocated array through an atomic index, so a request costs no lock and no allocation.
 *
 *   sendat-sink --port-file F --out F [--threads N] [--cap N]
 *
 * GET /count answers "<requests> <dropped>"; GET /dump (or SIGTERM / SIGINT) writes the
 * records to --out, one "<arrival ms with 3 decimals> <webhook-id>" line each. After a
 * signal it exits. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#define ID_CAP 72

struct rec {
    int64_t at_us;
    char id[ID_CAP];
};

static struct rec *recs;
static size_t cap = 4000000;
static atomic_size_t next_rec, dropped;
static const char *out_path;
static struct MHD_Response *empty;
static pthread_mutex_t dump_lock = PTHREAD_MUTEX_INITIALIZER;

static int64_t
now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Writes every complete record so far. A record is complete once its id is set; a request
 * racing the dump may be missing from it, never half-written (its slot is skipped). */
static int
dump(void)
{
    size_t n = atomic_load(&next_rec), written = 0;
    char tmp[4096];
    FILE *f;

    if (n > cap)
        n = cap;
    pthread_mutex_lock(&dump_lock);
    snprintf(tmp, sizeof(tmp), "%s.tmp", out_path);
    f = fopen(tmp, "w");
    if (!f) {
        pthread_mutex_unlock(&dump_lock);
        fprintf(stderr, "sendat-sink: %s: %s\n", tmp, strerror(errno));
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const struct rec *r = &recs[i];
        int64_t at = __atomic_load_n(&r->at_us, __ATOMIC_ACQUIRE);
        if (!at)
            continue;
        fprintf(f, "%" PRId64 ".%03d %s\n", at / 1000, (int)(at % 1000), r->id[0] ? r->id : "-");
        written++;
    }
    if (fclose(f) != 0 || rename(tmp, out_path) != 0) {
        pthread_mutex_unlock(&dump_lock);
        fprintf(stderr, "sendat-sink: writing %s failed\n", out_path);
        return -1;
    }
    pthread_mutex_unlock(&dump_lock);
    fprintf(stderr, "sendat-sink: %zu records written to %s\n", written, out_path);
    return 0;
}

static enum MHD_Result
answer_text(struct MHD_Connection *conn, unsigned status, const char *text)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
    enum MHD_Result ret;

    if (!r)
        return MHD_NO;
    ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

static int marker; /* *req_cls of a request already recorded */

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
           const char *version, const char *upload, size_t *upload_size, void **req_cls)
{
    (void)cls;
    (void)version;
    (void)upload;
    if (!strcmp(method, "GET")) {
        char text[64];
        if (!strcmp(url, "/count")) {
            snprintf(text, sizeof(text), "%zu %zu\n",
                     atomic_load(&next_rec) - atomic_load(&dropped), atomic_load(&dropped));
            return answer_text(conn, MHD_HTTP_OK, text);
        }
        if (!strcmp(url, "/dump"))
            return answer_text(conn, dump() == 0 ? MHD_HTTP_OK : MHD_HTTP_INTERNAL_SERVER_ERROR,
                               "dumped\n");
        return answer_text(conn, MHD_HTTP_NOT_FOUND, "no\n");
    }
    if (!*req_cls) { /* headers complete: this is the arrival */
        int64_t at = now_us();
        const char *id = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "webhook-id");
        size_t i = atomic_fetch_add(&next_rec, 1);

        if (i < cap) {
            snprintf(recs[i].id, ID_CAP, "%s", id ? id : "-");
            __atomic_store_n(&recs[i].at_us, at, __ATOMIC_RELEASE);
        } else {
            atomic_fetch_add(&dropped, 1);
        }
        *req_cls = &marker;
        return MHD_YES;
    }
    if (*upload_size) { /* the body: read and forget */
        *upload_size = 0;
        return MHD_YES;
    }
    return MHD_queue_response(conn, MHD_HTTP_NO_CONTENT, empty);
}

static int
listen_loopback(int *port)
{
    struct sockaddr_in a;
    socklen_t len = sizeof(a);
    int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);

    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((uint16_t)*port);
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 4096) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        close(fd);
        return -1;
    }
    *port = ntohs(a.sin_port);
    return fd;
}

static void
usage(void)
{
    fputs("usage: sendat-sink --out FILE [--port-file FILE] [--port N] [--threads N] [--cap N]\n",
          stderr);
    exit(2);
}

int
main(int argc, char **argv)
{
    const char *port_file = NULL;
    int port = 0, threads = 2, fd;
    struct MHD_Daemon *d;
    sigset_t set;
    int sig = 0;

    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc)
            usage();
        if (!strcmp(argv[i], "--out"))
            out_path = argv[++i];
        else if (!strcmp(argv[i], "--port-file"))
            port_file = argv[++i];
        else if (!strcmp(argv[i], "--port"))
            port = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads"))
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cap"))
            cap = strtoull(argv[++i], NULL, 10);
        else
            usage();
    }
    if (!out_path || threads < 1 || cap < 1)
        usage();
    /* untouched pages cost nothing: the array is only as large in memory as it is used */
    recs = mmap(NULL, cap * sizeof(*recs), PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (recs == MAP_FAILED) {
        fprintf(stderr, "sendat-sink: cannot map %zu records\n", cap);
        return 1;
    }
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* MHD's threads inherit the mask: signals come here */
    signal(SIGPIPE, SIG_IGN);
    if ((fd = listen_loopback(&port)) < 0) {
        fprintf(stderr, "sendat-sink: cannot listen on 127.0.0.1:%d: %s\n", port, strerror(errno));
        return 1;
    }
    empty = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    d = MHD_start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_TURBO, 0, NULL, NULL, on_request,
                         NULL, MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_THREAD_POOL_SIZE,
                         (unsigned)threads, MHD_OPTION_CONNECTION_LIMIT, 20000u,
                         MHD_OPTION_CONNECTION_TIMEOUT, 0u, MHD_OPTION_LISTEN_BACKLOG_SIZE, 4096u,
                         MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "sendat-sink: libmicrohttpd did not start\n");
        return 1;
    }
    if (port_file) {
        char tmp[4096];
        FILE *f;
        snprintf(tmp, sizeof(tmp), "%s.tmp", port_file);
        f = fopen(tmp, "w");
        if (!f || fprintf(f, "%d\n", port) < 0 || fclose(f) != 0 || rename(tmp, port_file) != 0) {
            fprintf(stderr, "sendat-sink: cannot write %s\n", port_file);
            return 1;
        }
    }
    fprintf(stderr, "sendat-sink: listening on 127.0.0.1:%d with %d threads\n", port, threads);
    while (sigwait(&set, &sig) != 0)
        ;
    MHD_stop_daemon(d);
    MHD_destroy_response(empty);
    return dump() == 0 ? 0 : 1;
}
