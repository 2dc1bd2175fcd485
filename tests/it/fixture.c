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

void
fx_print_log(struct fx *f, int i)
{
    char *log = proc_read_file(f->consumers[i].err_path);

    fprintf(stderr, "consumer %d's log:\n%s\n", i, log ? log : "(none)");
    free(log);
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
