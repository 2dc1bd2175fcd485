/* Starting and stopping nats-server for tests. The client port is reserved (ports.h) and the
 * server writes it to a ports file in its private folder; a restart reuses that port and
 * folder, so the store survives, and no other process took the port in between. Every server leads
 * its own process group and is killed at exit (proc.c). Tried with nats-server 2.9.10. This file
 * runs one node; natsd_cluster.c makes three of them a cluster. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "natsd.h"
#include "natsd_private.h"
#include "ports.h"
#include "proc.h"

#define READY_MS 15000 /* for the ports file, times the multiplier */

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

/* -c DIR/server.conf when config, else -js -sd DIR/js; -p the reserved port. */
static void
server_args(struct natsd *s, int config, struct server_argv *a)
{
    int n = 0;

    snprintf(a->sd, sizeof(a->sd), "%s/js", s->dir);
    snprintf(a->log, sizeof(a->log), "%s/server.log", s->dir);
    snprintf(a->conf, sizeof(a->conf), "%s/server.conf", s->dir);
    snprintf(a->port, sizeof(a->port), "%d", s->port);
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

void
natsd_print_log_tail(struct natsd *s)
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
            natsd_print_log_tail(s);
            return -1;
        }
        nanosleep(&tick, NULL);
    }
    fprintf(stderr, "nats-server %s wrote no ports file in time\n", s->name);
    natsd_print_log_tail(s);
    return -1;
}

int
natsd_launch(struct natsd *s, int config)
{
    struct server_argv a;

    remove_ports_files(s);
    if (!s->port && (s->port = port_reserve()) < 0) {
        fprintf(stderr, "nats-server %s: no loopback port left to reserve\n", s->name);
        s->port = 0;
        return -1;
    }
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
    if (natsd_launch(srv, 0) == 0)
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

int
natsd_write_config(struct natsd *srv, const char *config_text)
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
    if (natsd_write_config(srv, config_text) == 0 && natsd_launch(srv, 1) == 0)
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
    return natsd_launch(srv, access(conf, F_OK) == 0);
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
