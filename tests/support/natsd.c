/* Starting and stopping nats-server for tests. The server picks its client port (-p -1) and
 * writes it to a ports file in its private folder; a restart reuses that port and folder, so
 * the store survives. Cluster ports come from binding loopback sockets to port 0. Every server
 * leads its own process group and is killed at exit (proc.c). Tried with nats-server 2.9.10. */
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nats/nats.h>

#include "check.h"
#include "natsd.h"
#include "proc.h"

#define READY_MS 15000         /* for the ports file, times the multiplier */
#define CLUSTER_READY_MS 30000 /* for a replicas-3 stream, times the multiplier */
#define CLUSTER_TRIES 3

struct server_argv { /* built before fork: the child only execs */
    char *v[32];
    char sd[300], log[300], conf[300], port[16], cluster[64];
};

static const char *
server_bin(void)
{
    const char *b = getenv("NATS_SERVER");
    return b && *b ? b : "nats-server";
}

static void
add_cluster_args(struct natsd *s, struct server_argv *a, int *n)
{
    snprintf(a->cluster, sizeof(a->cluster), "nats://127.0.0.1:%d", s->cluster_port);
    a->v[(*n)++] = "--cluster";
    a->v[(*n)++] = a->cluster;
    a->v[(*n)++] = "--routes";
    a->v[(*n)++] = s->routes;
    a->v[(*n)++] = "--cluster_name";
    a->v[(*n)++] = "sendat";
    a->v[(*n)++] = "--server_name";
    a->v[(*n)++] = s->name;
}

/* -c DIR/server.conf when config, else -js -sd DIR/js; port 0 means "pick one" (-p -1). */
static void
server_args(struct natsd *s, int config, struct server_argv *a)
{
    int n = 0;

    snprintf(a->sd, sizeof(a->sd), "%s/js", s->dir);
    snprintf(a->log, sizeof(a->log), "%s/server.log", s->dir);
    snprintf(a->conf, sizeof(a->conf), "%s/server.conf", s->dir);
    snprintf(a->port, sizeof(a->port), "%d", s->port ? s->port : -1);
    a->v[n++] = (char *)server_bin();
    if (config) {
        a->v[n++] = "-c";
        a->v[n++] = a->conf;
    }
    a->v[n++] = "-a";
    a->v[n++] = "127.0.0.1";
    a->v[n++] = "-p";
    a->v[n++] = a->port;
    if (!config) {
        a->v[n++] = "-js";
        a->v[n++] = "-sd";
        a->v[n++] = a->sd;
    }
    a->v[n++] = "--ports_file_dir";
    a->v[n++] = s->dir;
    a->v[n++] = "-l";
    a->v[n++] = a->log;
    if (s->cluster_port)
        add_cluster_args(s, a, &n);
    a->v[n] = NULL;
}

static void
print_log_tail(struct natsd *s)
{
    char path[300], *log;
    size_t len;

    snprintf(path, sizeof(path), "%s/server.log", s->dir);
    log = proc_read_file(path);
    if (!log)
        return;
    len = strlen(log);
    fprintf(stderr, "nats-server %s log tail (%s):\n%s\n", s->name, path,
            log + (len > 2000 ? len - 2000 : 0));
    free(log);
}

static int
is_ports_file(const char *name)
{
    size_t n = strlen(name);

    return n > 6 && !strcmp(name + n - 6, ".ports");
}

/* Reads the client port from the ports file in DIR once it holds complete JSON; 0 before. */
static int
read_ports_file(struct natsd *s)
{
    DIR *d = opendir(s->dir);
    struct dirent *e;
    char path[600], *text = NULL, *p;
    int port = 0;

    while (d && !text && (e = readdir(d))) {
        if (is_ports_file(e->d_name)) {
            snprintf(path, sizeof(path), "%s/%s", s->dir, e->d_name);
            text = proc_read_file(path);
        }
    }
    if (d)
        closedir(d);
    if (text && strchr(text, '}') && (p = strstr(text, "\"nats://127.0.0.1:")))
        port = atoi(p + strlen("\"nats://127.0.0.1:"));
    free(text);
    return port;
}

/* A ports file left from before a restart would lie about the new process. */
static void
remove_ports_files(struct natsd *s)
{
    char path[600];
    DIR *d = opendir(s->dir);
    struct dirent *e;

    while (d && (e = readdir(d))) {
        if (is_ports_file(e->d_name)) {
            snprintf(path, sizeof(path), "%s/%s", s->dir, e->d_name);
            unlink(path);
        }
    }
    if (d)
        closedir(d);
}

/* Polls the ports file every 50 ms; -1 if the server exited first or the deadline passed. */
static int
wait_ready(struct natsd *s)
{
    struct timespec tick = {0, 50 * 1000000L};
    int64_t deadline = test_now_ms() + (int64_t)(READY_MS * test_timeout_multiplier());
    int status, port;

    while (test_now_ms() < deadline) {
        if ((port = read_ports_file(s)) > 0) {
            s->port = port;
            snprintf(s->url, sizeof(s->url), "nats://127.0.0.1:%d", port);
            return 0;
        }
        if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
            fprintf(stderr, "nats-server %s exited (%s %d) before it was ready\n", s->name,
                    WIFEXITED(status) ? "code" : "signal",
                    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
            proc_forget(s->pid);
            s->pid = 0;
            print_log_tail(s);
            return -1;
        }
        nanosleep(&tick, NULL);
    }
    fprintf(stderr, "nats-server %s wrote no ports file in time\n", s->name);
    print_log_tail(s);
    return -1;
}

static int
launch(struct natsd *s, int config)
{
    struct server_argv a;

    remove_ports_files(s);
    server_args(s, config, &a);
    s->pid = proc_start_group(a.v, NULL, -1, -1, -1);
    if (s->pid <= 0) {
        s->pid = 0;
        return -1;
    }
    if (wait_ready(s) == 0)
        return 0;
    natsd_kill(s); /* nothing of a failed start keeps running */
    return -1;
}

int
natsd_start(struct natsd *srv)
{
    memset(srv, 0, sizeof(*srv));
    snprintf(srv->name, sizeof(srv->name), "n0");
    if (test_mkdtemp(srv->dir, sizeof(srv->dir)) != 0)
        return -1;
    if (launch(srv, 0) == 0)
        return 0;
    natsd_stop(srv);
    return -1;
}

char *
natsd_replace(const char *text, const char *token, const char *value)
{
    size_t count = 0, tlen = strlen(token), vlen = strlen(value), n = 0;
    char *out;

    for (const char *p = strstr(text, token); tlen && p; p = strstr(p + tlen, token))
        count++;
    out = malloc(strlen(text) + count * vlen + 1);
    if (!out)
        return NULL;
    for (const char *p = text; *p;) {
        if (tlen && !strncmp(p, token, tlen)) {
            memcpy(out + n, value, vlen);
            n += vlen;
            p += tlen;
        } else {
            out[n++] = *p++;
        }
    }
    out[n] = '\0';
    return out;
}

static int
write_config(struct natsd *srv, const char *config_text)
{
    char path[300], *text = natsd_replace(config_text, "$DIR", srv->dir);
    FILE *f;
    int rc = -1;

    snprintf(path, sizeof(path), "%s/server.conf", srv->dir);
    if (text && (f = fopen(path, "w"))) {
        rc = fputs(text, f) < 0 ? -1 : 0;
        if (fclose(f) != 0)
            rc = -1;
    }
    free(text);
    return rc;
}

int
natsd_start_config(struct natsd *srv, const char *config_text)
{
    memset(srv, 0, sizeof(*srv));
    snprintf(srv->name, sizeof(srv->name), "n0");
    if (test_mkdtemp(srv->dir, sizeof(srv->dir)) != 0)
        return -1;
    if (write_config(srv, config_text) == 0 && launch(srv, 1) == 0)
        return 0;
    natsd_stop(srv);
    return -1;
}

void
natsd_kill(struct natsd *srv)
{
    int status;

    if (srv->pid <= 0)
        return;
    kill(-srv->pid, SIGKILL);
    waitpid(srv->pid, &status, 0);
    proc_forget(srv->pid);
    srv->pid = 0;
}

void
natsd_term(struct natsd *srv)
{
    struct timespec tick = {0, 20 * 1000000L};
    int status;

    if (srv->pid <= 0)
        return;
    kill(srv->pid, SIGTERM);
    for (int i = 0; i < 500 && waitpid(srv->pid, &status, WNOHANG) != srv->pid; i++)
        nanosleep(&tick, NULL);
    natsd_kill(srv); /* if it did not go within 10 s */
}

int
natsd_restart(struct natsd *srv)
{
    char conf[300];

    natsd_kill(srv); /* in case it still runs */
    snprintf(conf, sizeof(conf), "%s/server.conf", srv->dir);
    return launch(srv, access(conf, F_OK) == 0);
}

void
natsd_stop(struct natsd *srv)
{
    struct timespec tick = {0, 20 * 1000000L};
    int status, reaped = 0;

    if (srv->pid > 0) {
        kill(srv->pid, SIGTERM);
        for (int i = 0; i < 250 && !reaped; i++) { /* 5 s */
            reaped = waitpid(srv->pid, &status, WNOHANG) == srv->pid;
            if (!reaped)
                nanosleep(&tick, NULL);
        }
        kill(-srv->pid, SIGKILL);
        if (!reaped)
            waitpid(srv->pid, &status, 0);
        proc_forget(srv->pid);
        srv->pid = 0;
    }
    if (srv->dir[0])
        test_rmtree(srv->dir);
    srv->dir[0] = '\0';
}

/* Three distinct free loopback ports: all three sockets stay bound until every port is read. */
static int
free_ports(int ports[3])
{
    struct sockaddr_in a;
    socklen_t len;
    int fd[3] = {-1, -1, -1}, rc = 0;

    for (int i = 0; i < 3; i++) {
        memset(&a, 0, sizeof(a));
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        len = sizeof(a);
        fd[i] = socket(AF_INET, SOCK_STREAM, 0);
        if (fd[i] < 0 || bind(fd[i], (struct sockaddr *)&a, sizeof(a)) != 0 ||
            getsockname(fd[i], (struct sockaddr *)&a, &len) != 0)
            rc = -1;
        ports[i] = ntohs(a.sin_port);
    }
    for (int i = 0; i < 3; i++)
        if (fd[i] >= 0)
            close(fd[i]);
    return rc;
}

/* natsOptions_SetURL takes one URL only: a comma-separated list goes in as servers. */
static natsStatus
set_servers(natsOptions *o, const char *urls)
{
    char copy[256], *save = NULL, *tok;
    const char *list[8];
    int n = 0;

    snprintf(copy, sizeof(copy), "%s", urls);
    for (tok = strtok_r(copy, ",", &save); tok && n < 8; tok = strtok_r(NULL, ",", &save))
        list[n++] = tok;
    return natsOptions_SetServers(o, list, n);
}

natsStatus
natsd_connect(natsConnection **nc, const char *urls, const char *user, const char *password)
{
    natsOptions *o = NULL;
    natsStatus s = natsOptions_Create(&o);

    if (s == NATS_OK)
        s = set_servers(o, urls);
    if (s == NATS_OK && user)
        s = natsOptions_SetUserInfo(o, user, password ? password : "");
    if (s == NATS_OK && user && (!strcmp(user, "producer") || !strcmp(user, "consumer"))) {
        char inbox[64]; /* the role's own inbox prefix, the only one it may subscribe to */
        snprintf(inbox, sizeof(inbox), "_INBOX_sendat_%s", user);
        s = natsOptions_SetCustomInboxPrefix(o, inbox);
    }
    if (s == NATS_OK)
        s = natsConnection_Connect(nc, o);
    natsOptions_Destroy(o);
    return s;
}

/* One attempt to create (then delete) a replicas-3 stream: 0 once JetStream has a leader. */
static int
try_r3_stream(const char *urls, const char *user, const char *password)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    jsStreamConfig sc;
    jsStreamInfo *si = NULL;
    const char *subj[] = {"natsd.ready"};
    int rc = -1;

    if (natsd_connect(&nc, urls, user, password) != NATS_OK ||
        natsConnection_JetStream(&js, nc, NULL) != NATS_OK)
        goto out;
    jsStreamConfig_Init(&sc);
    sc.Name = "NATSD_READY";
    sc.Subjects = subj;
    sc.SubjectsLen = 1;
    sc.Replicas = 3;
    if (js_AddStream(&si, js, &sc, NULL, NULL) == NATS_OK) {
        rc = 0;
        js_DeleteStream(js, "NATSD_READY", NULL, NULL);
    }
out:
    jsStreamInfo_Destroy(si);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    return rc;
}

static int
cluster_usable(struct natsd_cluster *c, const char *user, const char *password)
{
    int64_t deadline = test_now_ms() + (int64_t)(CLUSTER_READY_MS * test_timeout_multiplier());
    struct timespec tick = {0, 200 * 1000000L};

    while (test_now_ms() < deadline) {
        if (try_r3_stream(c->urls, user, password) == 0)
            return 0;
        nanosleep(&tick, NULL);
    }
    fprintf(stderr, "3-node cluster %s: no replicas-3 stream in time\n", c->urls);
    for (int i = 0; i < 3; i++)
        print_log_tail(&c->node[i]);
    return -1;
}

/* Node i of c (n<i+1>, its own folder): from config text when given, else from the flags
 * its cluster_port and routes make. Appends its URL to c->urls. */
static int
start_node(struct natsd_cluster *c, int i, const char *text)
{
    struct natsd *s = &c->node[i];
    size_t n = strlen(c->urls);

    snprintf(s->name, sizeof(s->name), "n%d", i + 1);
    if (test_mkdtemp(s->dir, sizeof(s->dir)) != 0 || (text && write_config(s, text) != 0) ||
        launch(s, text != NULL) != 0)
        return -1;
    snprintf(c->urls + n, sizeof(c->urls) - n, "%s%s", i ? "," : "", s->url);
    return 0;
}

static int
cluster_launch(struct natsd_cluster *c, const int ports[3])
{
    char routes[256];

    snprintf(routes, sizeof(routes), "nats://127.0.0.1:%d,nats://127.0.0.1:%d,nats://127.0.0.1:%d",
             ports[0], ports[1], ports[2]);
    for (int i = 0; i < 3; i++) {
        c->node[i].cluster_port = ports[i];
        snprintf(c->node[i].routes, sizeof(c->node[i].routes), "%s", routes);
        if (start_node(c, i, NULL) != 0)
            return -1;
    }
    return 0;
}

/* text with "$ROUTE_PORT1".."$ROUTE_PORT3" replaced by the three cluster ports, malloc'd. */
static char *
with_route_ports(const char *text, const int ports[3])
{
    char token[16], value[16], *cur = strdup(text), *next;

    for (int i = 0; i < 3 && cur; i++) {
        snprintf(token, sizeof(token), "$ROUTE_PORT%d", i + 1);
        snprintf(value, sizeof(value), "%d", ports[i]);
        next = natsd_replace(cur, token, value);
        free(cur);
        cur = next;
    }
    return cur;
}

/* One try at a cluster on three fresh route ports, from config_text when given. */
static int
cluster_try(struct natsd_cluster *c, const char *const config_text[3], const char *user,
            const char *password)
{
    int ports[3], rc = 0;

    memset(c, 0, sizeof(*c));
    if (free_ports(ports) != 0)
        return -1;
    if (!config_text)
        rc = cluster_launch(c, ports);
    for (int i = 0; config_text && i < 3 && rc == 0; i++) {
        char *text = with_route_ports(config_text[i], ports);
        rc = text ? start_node(c, i, text) : -1;
        free(text);
    }
    if (rc == 0 && cluster_usable(c, user, password) == 0)
        return 0;
    natsd_cluster_stop(c);
    return -1;
}

/* A route port read free can be taken by a parallel test before its node binds it (the node
 * then exits at once): such a start is tried again on new ports, at most CLUSTER_TRIES times. */
static int
cluster_start(struct natsd_cluster *c, const char *const config_text[3], const char *user,
              const char *password)
{
    for (int i = 0; i < CLUSTER_TRIES; i++) {
        if (cluster_try(c, config_text, user, password) == 0)
            return 0;
        fprintf(stderr, "3-node cluster: start %d of %d failed\n", i + 1, CLUSTER_TRIES);
    }
    return -1;
}

int
natsd_cluster_start_config(struct natsd_cluster *c, const char *const config_text[3],
                           const char *user, const char *password)
{
    return cluster_start(c, config_text, user, password);
}

int
natsd_cluster_start(struct natsd_cluster *c)
{
    return cluster_start(c, NULL, NULL, NULL);
}

void
natsd_cluster_stop(struct natsd_cluster *c)
{
    for (int i = 0; i < 3; i++)
        natsd_stop(&c->node[i]);
}
