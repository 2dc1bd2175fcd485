/* The integration tests' deployment: real processes only; all waiting is on conditions with
 * deadlines (check.h), never on sleeps. */
#include <fnmatch.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <sodium.h>

#include "check.h"
#include "fixture.h"
#include "layout.h"
#include "shutdown.h"

const char *
fx_sendat_bin(void)
{
    const char *b = getenv("SENDAT_BIN");
    return b ? b : "sendat";
}

const char *
fx_consumer_bin(void)
{
    const char *b = getenv("SENDAT_CONSUMER_BIN");
    return b ? b : "sendat-consumer";
}

static char *fx_env[4];

static void
set_env(struct fx *f, const char *url)
{
    snprintf(f->env_url, sizeof(f->env_url), "SENDAT_NATS_URL=%s", url);
    snprintf(f->env_key, sizeof(f->env_key), "SENDAT_KEY_FILE=%s", f->key);
    fx_env[0] = f->env_url;
    fx_env[1] = f->env_key;
    fx_env[2] = NULL;
}

int
fx_sendat(struct fx *f, char *out, size_t cap, char *err, size_t errcap, ...)
{
    char *argv[32];
    int n = 0;
    va_list ap;
    char dummy_out[64], dummy_err[512];

    (void)f;
    argv[n++] = (char *)fx_sendat_bin();
    va_start(ap, errcap);
    for (char *a; n < 31 && (a = va_arg(ap, char *));)
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    if (!out) {
        out = dummy_out;
        cap = sizeof(dummy_out);
    }
    if (!err) {
        err = dummy_err;
        errcap = sizeof(dummy_err);
    }
    n = proc_run(argv, fx_env, NULL, out, cap, err, errcap, 60000);
    if (n != 0 && err == dummy_err)
        fprintf(stderr, "sendat %s exited %d: %s\n", argv[1], n, err);
    return n;
}

const char *fx_ack_wait = "5s";
const char *fx_slot = "2s";
const char *fx_shards = NULL;
const char *fx_replicas = NULL;
int fx_do_init = 1;
const char *fx_server_config = NULL;

void
fx_init(struct fx *f)
{
    char out[256], err[512];

    assert_int_equal(fx_sendat(f, out, sizeof(out), err, sizeof(err), "init", "--window", "10s",
                               "--slot", fx_slot, "--lead", "1s", "--ack-wait", fx_ack_wait,
                               "--replicas",
                               fx_replicas    ? fx_replicas
                               : f->clustered ? "3"
                                              : "1",
                               fx_shards ? "--shards" : NULL, fx_shards, NULL),
                     0);
}

void
fx_start(struct fx *f, int clustered)
{
    char out[256], err[512];

    memset(f, 0, sizeof(*f));
    assert_int_equal(test_mkdtemp(f->dir, sizeof(f->dir)), 0);
    snprintf(f->key, sizeof(f->key), "%s/sendat.key", f->dir);
    f->clustered = clustered;
    if (clustered) {
        assert_int_equal(natsd_cluster_start(&f->cluster), 0);
        set_env(f, f->cluster.urls);
    } else {
        assert_int_equal(fx_server_config ? natsd_start_config(&f->srv, fx_server_config)
                                          : natsd_start(&f->srv),
                         0);
        set_env(f, f->srv.url);
    }
    assert_int_equal(fx_sendat(f, out, sizeof(out), err, sizeof(err), "keygen", f->key, NULL), 0);
    if (fx_do_init)
        fx_init(f);
    assert_int_equal(receiver_start(&f->recv), 0);
}

static int
has_var(char *const env[], const char *prefix)
{
    for (int k = 0; env && env[k]; k++)
        if (!strncmp(env[k], prefix, strlen(prefix)))
            return 1;
    return 0;
}

void
fx_consumer(struct fx *f, int i, char *const extra_env[])
{
    char *argv[] = {(char *)fx_consumer_bin(), NULL};
    char *env[16], name[64], pname[16];
    int n = 0;

    snprintf(name, sizeof(name), "SENDAT_CONSUMER_NAME=c%d", i);
    env[n++] = f->env_url;
    env[n++] = f->env_key;
    env[n++] = name;
    env[n++] = "SENDAT_LOG_LEVEL=info";
    for (int k = 0; extra_env && extra_env[k] && n < 14; k++)
        env[n++] = extra_env[k];
    if (!has_var(extra_env, "SENDAT_HTTP_ADDR="))  /* the first of a name counts */
        env[n++] = "SENDAT_HTTP_ADDR=127.0.0.1:0"; /* a free port, logged as event=http_listening */
    env[n] = NULL;
    snprintf(pname, sizeof(pname), "c%d", i);
    assert_int_equal(proc_spawn(&f->consumers[i], f->dir, pname, argv, env), 0);
    if (i >= f->n_consumers)
        f->n_consumers = i + 1;
}

int
fx_stop_consumers(struct fx *f)
{
    int bad = 0;

    for (int i = 0; i < f->n_consumers; i++) {
        if (!f->consumers[i].pid || !proc_alive(&f->consumers[i]))
            continue;
        proc_signal(&f->consumers[i], SIGTERM);
    }
    for (int i = 0; i < f->n_consumers; i++) {
        if (!f->consumers[i].pid || f->consumers[i].exited)
            continue;
        if (proc_wait(&f->consumers[i], 60000) != 0) {
            fprintf(stderr, "consumer %d did not exit 0 after SIGTERM\n", i);
            fx_print_log(f, i);
            bad++;
        }
    }
    return bad;
}

int
fx_schedule(struct fx *f, int64_t due_ms, const char *path, char *id, size_t cap)
{
    char at[40], url[300], err[512];
    int rc;

    snprintf(at, sizeof(at), "@%" PRId64 ".%03d", due_ms / 1000, (int)(due_ms % 1000));
    snprintf(url, sizeof(url), "%s%s", receiver_url(f->recv), path);
    rc = fx_sendat(f, id, cap, err, sizeof(err), "schedule", "--at", at, "--webhook", url, "--data",
                   "{\"hello\":1}", NULL);
    id[strcspn(id, "\n")] = '\0';
    return rc;
}

int
fx_schedule_many(struct fx *f, int64_t due_ms, const char *prefix, int n, char (*ids)[80])
{
    return fx_schedule_many_mixed(f, due_ms, prefix, n, ids, 0);
}

int
fx_schedule_many_mixed(struct fx *f, int64_t due_ms, const char *prefix, int n, char (*ids)[80],
                       int mixed)
{
    char path[600], err[1024], *out, *line, *save = NULL;
    size_t cap = (size_t)n * 96 + 64;
    FILE *fp;
    int rc;
    long k;

    snprintf(path, sizeof(path), "%s/many-%" PRId64 ".ndjson", f->dir, test_now_ms());
    assert_non_null(fp = fopen(path, "w"));
    for (int i = 0; i < n; i++)
        fprintf(fp,
                "{\"at\":\"@%" PRId64 ".%03d\",\"webhook\":\"%s%s/%d\",\"data\":"
                "\"{\\\"hello\\\":1}\"%s}\n",
                due_ms / 1000, (int)(due_ms % 1000), receiver_url(f->recv), prefix, i,
                mixed && i % 2 ? ",\"at-most-once\":true" : "");
    fclose(fp);
    assert_non_null(out = calloc(1, cap));
    rc = fx_sendat(f, out, cap, err, sizeof(err), "schedule", "--batch", path, NULL);
    for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *id = NULL; /* "LINE ID" */

        k = strtol(line, &id, 10);
        if (k >= 1 && k <= n && id && *id == ' ')
            snprintf(ids[k - 1], 80, "%s", id + 1);
    }
    free(out);
    return rc;
}

long
fx_counter(struct fx *f, int i, const char *name)
{
    char *log = proc_read_file(f->consumers[i].err_path), *line, *p, key[64];
    long v = -1;

    if (!log)
        return -1;
    line = strstr(log, "event=counters");
    for (char *next = line; next; next = strstr(next + 1, "event=counters"))
        line = next; /* the last one */
    snprintf(key, sizeof(key), " %s=", name);
    if (line && (p = strstr(line, key)))
        v = strtol(p + strlen(key), NULL, 10);
    free(log);
    return v;
}

void
fx_stop(struct fx *f)
{
    for (int i = 0; i < f->n_consumers; i++)
        if (f->consumers[i].pid && !f->consumers[i].exited)
            proc_kill9(&f->consumers[i]);
    receiver_stop(f->recv);
    if (f->clustered)
        natsd_cluster_stop(&f->cluster);
    else
        natsd_stop(&f->srv);
    test_rmtree(f->dir);
}

void
fx_dedupe_window(struct fx *f, int64_t ms)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    jsStreamInfo *si = NULL, *up = NULL;

    assert_int_equal(natsConnection_ConnectTo(&nc, f->srv.url), NATS_OK);
    assert_int_equal(natsConnection_JetStream(&js, nc, NULL), NATS_OK);
    assert_int_equal(js_GetStreamInfo(&si, js, SA_TASKS_STREAM, NULL, NULL), NATS_OK);
    si->Config->Duplicates = ms * 1000000LL; /* ns */
    assert_int_equal(js_UpdateStream(&up, js, si->Config, NULL, NULL), NATS_OK);
    jsStreamInfo_Destroy(up);
    jsStreamInfo_Destroy(si);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
}

void
fx_finish(struct fx *f)
{
    assert_int_equal(fx_stop_consumers(f), 0);
    fx_stop(f);
}

void
fx_smtp_sink(struct fx *f, struct proc *sink, char *env, size_t cap)
{
    char script[400], maildir[400], portfile[400], *port;
    const char *support = getenv("SENDAT_SUPPORT");
    char *argv[] = {"/usr/bin/python3", script, maildir, portfile, NULL};

    snprintf(script, sizeof(script), "%s/smtp_sink.py", support ? support : "tests/support");
    snprintf(maildir, sizeof(maildir), "%s/maildir", f->dir);
    snprintf(portfile, sizeof(portfile), "%s/smtp.port", f->dir);
    assert_int_equal(proc_spawn(sink, f->dir, "smtp", argv, NULL), 0);
    assert_true(wait_for_file(portfile, 20000));
    port = proc_read_file(portfile);
    assert_non_null(port);
    snprintf(env, cap, "SENDAT_SMTP_URL=smtp://127.0.0.1:%s", port);
    free(port);
}

static size_t
collect(char *data, size_t size, size_t n, void *arg)
{
    char *buf = arg;
    size_t have = strlen(buf), add = size * n;

    if (have + add < FX_BODY_MAX) {
        memcpy(buf + have, data, add);
        buf[have + add] = '\0';
    }
    return add;
}

void
fx_print_log(struct fx *f, int i)
{
    char *log = proc_read_file(f->consumers[i].err_path);

    fprintf(stderr, "consumer %d's log:\n%s\n", i, log ? log : "(none)");
    free(log);
}

int
fx_consumer_port(struct fx *f, int i)
{
    char *log = proc_read_file(f->consumers[i].err_path), *p;
    int port = 0;

    p = log ? strstr(log, "event=http_listening") : NULL;
    if (p && (p = strstr(p, "port=")))
        port = atoi(p + 5);
    free(log);
    return port;
}

long
fx_consumer_get(struct fx *f, int i, const char *path, char *body)
{
    char url[128];
    long status = 0;
    int port = fx_consumer_port(f, i);
    CURL *e = NULL;

    body[0] = '\0';
    if (port <= 0 || !(e = curl_easy_init()))
        return 0;
    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, body);
    curl_easy_setopt(e, CURLOPT_TIMEOUT, 10L);
    if (curl_easy_perform(e) == CURLE_OK)
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(e);
    return status;
}

long
fx_consumer_metric(struct fx *f, int i, const char *name)
{
    static char body[FX_BODY_MAX];
    char want[128], *p;

    if (fx_consumer_get(f, i, "/metrics", body) != 200)
        return -1;
    snprintf(want, sizeof(want), "\n%s ", name);
    p = strstr(body, want);
    return p ? atol(p + strlen(want)) : -1;
}

struct status_wait {
    struct fx *f;
    const char *id, *word;
    char out[65536];
};

static int
status_holds(void *arg)
{
    struct status_wait *w = arg;

    return fx_sendat(w->f, w->out, sizeof(w->out), NULL, 0, "status", w->id, NULL) == 0 &&
           strstr(w->out, w->word) != NULL;
}

int
fx_status_says(struct fx *f, const char *id, const char *word, int64_t timeout_ms)
{
    struct status_wait *w = calloc(1, sizeof(*w));
    int ok;

    assert_non_null(w);
    *w = (struct status_wait){.f = f, .id = id, .word = word};
    ok = wait_until(status_holds, w, timeout_ms);
    if (!ok)
        fprintf(stderr, "status %s never said \"%s\"; last:\n%s\n", id, word, w->out);
    free(w);
    return ok;
}

int
fx_arrivals(struct fx *f, const char *prefix, int *seen, int n)
{
    size_t len = strlen(prefix);
    int distinct = 0;

    memset(seen, 0, sizeof(int) * (size_t)n);
    for (size_t i = 0; i < receiver_count(f->recv); i++) {
        struct receiver_hit h;
        char *end = h.path;
        long k;
        if (receiver_hit_copy(f->recv, i, &h) != 0)
            continue;
        k = strncmp(h.path, prefix, len) ? -1 : strtol(h.path + len, &end, 10);
        if (k >= 0 && k < n && end > h.path + len && seen[k]++ == 0)
            distinct++;
        receiver_hit_free(&h);
    }
    return distinct;
}

/* SENDAT_TEST_ONLY names one test (a pattern: * and ?) to run alone; SENDAT_TEST_PART is the one
 * test a ctest entry of a split file runs (tests/it/CMakeLists.txt, SPLIT). With both, the part
 * runs if the pattern matches it, else nothing (0: the entry passes). */
static int
fx_filter(void)
{
    const char *only = getenv("SENDAT_TEST_ONLY"), *part = getenv("SENDAT_TEST_PART");

    if (part && only && fnmatch(only, part, 0) != 0) {
        printf("%s: not run (SENDAT_TEST_ONLY=%s)\n", part, only);
        return 0;
    }
    if (part || only)
        cmocka_set_test_filter(part ? part : only);
    return 1;
}

int
fx_run(const struct CMUnitTest *tests, size_t n, CMFixtureFunction setup,
       CMFixtureFunction teardown)
{
    int rc;

    if (!fx_filter())
        return 0;
    if (sodium_init() < 0 || curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return 1;
    nats_Open(-1);
    rc = _cmocka_run_group_tests("tests", tests, n, setup, teardown);
    sa_nats_shutdown(5000);
    curl_global_cleanup();
    return rc;
}

kvStore *
fx_short_ledger(struct fx *f, jsCtx *js, int64_t ttl_ms)
{
    kvConfig kc;
    kvStore *kv = NULL;

    assert_int_equal(js_DeleteKeyValue(js, SA_CLAIMS_BUCKET), NATS_OK);
    kvConfig_Init(&kc);
    kc.Bucket = SA_CLAIMS_BUCKET;
    kc.History = 32;
    kc.TTL = ttl_ms * 1000000LL; /* the stream's MaxAge, in ns */
    kc.StorageType = js_FileStorage;
    assert_int_equal(js_CreateKeyValue(&kv, js, &kc), NATS_OK);
    fx_init(f); /* records the bucket made again: consumers claim only in the one init knows */
    return kv;
}

int
fx_member_instance(kvStore *members, const char *name, char *out, size_t cap)
{
    kvEntry *e = NULL;
    const char *v;

    if (kvStore_Get(&e, members, name) != NATS_OK)
        return 0;
    v = kvEntry_ValueString(e);
    snprintf(out, cap, "%.*s", (int)strcspn(v, " "), v);
    kvEntry_Destroy(e);
    return out[0] != '\0';
}

void
fx_js_open(struct fx *f, natsConnection **nc, jsCtx **js)
{
    assert_int_equal(natsConnection_ConnectTo(nc, f->srv.url), NATS_OK);
    assert_int_equal(natsConnection_JetStream(js, *nc, NULL), NATS_OK);
}

void
fx_js_close(natsConnection **nc, jsCtx **js)
{
    jsCtx_Destroy(*js);
    natsConnection_Destroy(*nc);
    *js = NULL;
    *nc = NULL;
}

uint64_t
fx_stream_msgs(jsCtx *js, const char *stream)
{
    jsStreamInfo *si = NULL;
    uint64_t n;

    assert_int_equal(js_GetStreamInfo(&si, js, stream, NULL, NULL), NATS_OK);
    n = si->State.Msgs;
    jsStreamInfo_Destroy(si);
    return n;
}
