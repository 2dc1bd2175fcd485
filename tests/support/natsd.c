/* Starting and stopping nats-server. The server picks its client port (-p -1) and writes it
 * to a ports file; cluster ports come from binding loopback sockets to port 0. Tried with
 * nats-server 2.9.10. */
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

static const char *
server_bin(void)
{
    const char *b = getenv("NATS_SERVER");
    return b && *b ? b : "nats-server";
}

static void
exec_server(struct natsd *s, const char *config)
{
    char sd[300], log[300], conf[300], port[16];
    char *argv[24];
    int n = 0;

    snprintf(sd, sizeof(sd), "%s/js", s->dir);
    snprintf(log, sizeof(log), "%s/server.log", s->dir);
    snprintf(conf, sizeof(conf), "%s/server.conf", s->dir);
    snprintf(port, sizeof(port), "%d", s->port ? s->port : -1);
    argv[n++] = (char *)server_bin();
    if (config) {
        argv[n++] = "-c";
        argv[n++] = conf;
    }
    argv[n++] = "-a";
    argv[n++] = "127.0.0.1";
    argv[n++] = "-p";
    argv[n++] = port;
    if (!config) {
        argv[n++] = "-js";
        argv[n++] = "-sd";
        argv[n++] = sd;
    }
    argv[n++] = "--ports_file_dir";
    argv[n++] = s->dir;
    argv[n++] = "-l";
    argv[n++] = log;
    if (s->cluster_port) {
        static char cluster[64];
        snprintf(cluster, sizeof(cluster), "nats://127.0.0.1:%d", s->cluster_port);
        argv[n++] = "--cluster";
        argv[n++] = cluster;
        argv[n++] = "--routes";
        argv[n++] = s->routes;
        argv[n++] = "--cluster_name";
        argv[n++] = "sendat";
        argv[n++] = "--server_name";
        argv[n++] = s->name;
    }
    argv[n] = NULL;
    setpgid(0, 0);
    execvp(argv[0], argv);
    _exit(127);
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
    fprintf(stderr, "nats-server %s log tail:\n%s\n", s->name, log + (len > 2000 ? len - 2000 : 0));
    free(log);
}

/* Reads the client port from the ports file in DIR once it holds complete JSON. */
static int
read_ports_file(struct natsd *s)
{
    DIR *d = opendir(s->dir);
    struct dirent *e;
    char path[600], *text = NULL, *p;
    int port = 0;

    while (d && (e = readdir(d)) && !text) {
        size_t n = strlen(e->d_name);
        if (n > 6 && !strcmp(e->d_name + n - 6, ".ports")) {
            snprintf(path, sizeof(path), "%s/%s", s->dir, e->d_name);
            text = proc_read_file(path);
        }
    }
    if (d)
        closedir(d);
    if (text && strchr(text, '}') && (p = strstr(text, "nats://127.0.0.1:")))
        port = atoi(p + strlen("nats://127.0.0.1:"));
    free(text);
    return port;
}

static int
wait_ready(struct natsd *s)
{
    struct timespec tick = {0, 50 * 1000000L};
    int64_t deadline = test_now_ms() + (int64_t)(15000 * test_timeout_multiplier());
    int status;

    while (test_now_ms() < deadline) {
        int port = read_ports_file(s);
        if (port > 0) {
            s->port = port;
            snprintf(s->url, sizeof(s->url), "nats://127.0.0.1:%d", port);
            return 0;
        }
        if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
            fprintf(stderr, "nats-server %s exited before it was ready\n", s->name);
            print_log_tail(s);
            proc_forget(s->pid);
            s->pid = 0;
            return -1;
        }
        nanosleep(&tick, NULL);
    }
    print_log_tail(s);
    return -1;
}

static int
launch(struct natsd *s, const char *config)
{
    char path[600];
    DIR *d;
    struct dirent *e;

    if ((d = opendir(s->dir))) { /* a stale ports file from before a restart would lie */
        while ((e = readdir(d)))
            if (strstr(e->d_name, ".ports")) {
                snprintf(path, sizeof(path), "%s/%s", s->dir, e->d_name);
                unlink(path);
            }
        closedir(d);
    }
    s->pid = fork();
    if (s->pid == 0)
        exec_server(s, config);
    if (s->pid < 0)
        return -1;
    setpgid(s->pid, s->pid);
    proc_track(s->pid);
    return wait_ready(s);
}

int
natsd_start(struct natsd *srv)
{
    memset(srv, 0, sizeof(*srv));
    snprintf(srv->name, sizeof(srv->name), "n0");
    if (test_mkdtemp(srv->dir, sizeof(srv->dir)) != 0)
        return -1;
    return launch(srv, NULL);
}

static char *
replace_dir(const char *text, const char *dir)
{
    size_t cap = strlen(text) * 2 + strlen(dir) * 16 + 1, n = 0;
    char *out = malloc(cap);

    for (const char *p = text; out && *p && n + strlen(dir) + 2 < cap; p++) {
        if (!strncmp(p, "$DIR", 4)) {
            n += (size_t)sprintf(out + n, "%s", dir);
            p += 3;
        } else {
            out[n++] = *p;
        }
    }
    if (out)
        out[n] = '\0';
    return out;
}

int
natsd_start_config(struct natsd *srv, const char *config_text)
{
    char path[300], *text;
    FILE *f;

    memset(srv, 0, sizeof(*srv));
    snprintf(srv->name, sizeof(srv->name), "n0");
    if (test_mkdtemp(srv->dir, sizeof(srv->dir)) != 0)
        return -1;
    snprintf(path, sizeof(path), "%s/server.conf", srv->dir);
    text = replace_dir(config_text, srv->dir);
    f = fopen(path, "w");
    if (!f || !text) {
        free(text);
        if (f)
            fclose(f);
        return -1;
    }
    fputs(text, f);
    fclose(f);
    free(text);
    return launch(srv, "conf");
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

int
natsd_restart(struct natsd *srv)
{
    char conf[300];

    snprintf(conf, sizeof(conf), "%s/server.conf", srv->dir);
    return launch(srv, access(conf, F_OK) == 0 ? "conf" : NULL);
}

void
natsd_stop(struct natsd *srv)
{
    struct timespec tick = {0, 20 * 1000000L};
    int status;

    if (srv->pid > 0) {
        kill(srv->pid, SIGTERM);
        for (int i = 0; i < 250; i++) {
            if (waitpid(srv->pid, &status, WNOHANG) == srv->pid)
                break;
            nanosleep(&tick, NULL);
        }
        kill(-srv->pid, SIGKILL);
        waitpid(srv->pid, &status, WNOHANG);
        proc_forget(srv->pid);
        srv->pid = 0;
    }
    test_rmtree(srv->dir);
}

static int
free_port(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

/* Creates and deletes a replicas-3 stream until the cluster has a JetStream leader. */
static int
cluster_usable(struct natsd_cluster *c)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    jsStreamConfig sc;
    jsStreamInfo *si = NULL;
    const char *subj[] = {"natsd.ready"};
    int ok = 0;
    int64_t deadline = test_now_ms() + (int64_t)(30000 * test_timeout_multiplier());
    struct timespec tick = {0, 200 * 1000000L};

    if (natsConnection_ConnectTo(&nc, c->urls) != NATS_OK || natsConnection_JetStream(&js, nc, NULL) != NATS_OK)
        goto out;
    jsStreamConfig_Init(&sc);
    sc.Name = "NATSD_READY";
    sc.Subjects = subj;
    sc.SubjectsLen = 1;
    sc.Replicas = 3;
    while (!ok && test_now_ms() < deadline) {
        ok = js_AddStream(&si, js, &sc, NULL, NULL) == NATS_OK;
        jsStreamInfo_Destroy(si);
        si = NULL;
        if (!ok)
            nanosleep(&tick, NULL);
    }
    if (ok)
        js_DeleteStream(js, "NATSD_READY", NULL, NULL);
out:
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    return ok ? 0 : -1;
}

int
natsd_cluster_start(struct natsd_cluster *c)
{
    char routes[256];
    int ports[3], n = 0;

    memset(c, 0, sizeof(*c));
    for (int i = 0; i < 3; i++)
        if ((ports[i] = free_port()) <= 0)
            return -1;
    snprintf(routes, sizeof(routes), "nats://127.0.0.1:%d,nats://127.0.0.1:%d,nats://127.0.0.1:%d",
             ports[0], ports[1], ports[2]);
    for (int i = 0; i < 3; i++) {
        struct natsd *s = &c->node[i];
        snprintf(s->name, sizeof(s->name), "n%d", i + 1);
        s->cluster_port = ports[i];
        snprintf(s->routes, sizeof(s->routes), "%s", routes);
        if (test_mkdtemp(s->dir, sizeof(s->dir)) != 0 || launch(s, NULL) != 0)
            return -1;
        n += snprintf(c->urls + n, sizeof(c->urls) - (size_t)n, "%s%s", i ? "," : "", s->url);
    }
    return cluster_usable(c);
}

void
natsd_cluster_stop(struct natsd_cluster *c)
{
    for (int i = 0; i < 3; i++)
        natsd_stop(&c->node[i]);
}
