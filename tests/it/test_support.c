/* Smoke test of the test fixtures themselves (tests/support): a JetStream node that survives
 * SIGKILL with its store, a config-file node, a 3-node cluster that keeps a replicas-3
 * stream through a node's kill and restart, the HTTP receiver's record and scripted answers,
 * and child processes. If this fails, every other integration test's result is suspect. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <nats/nats.h>

#include "check.h"
#include "fixture.h"
#include "natsd.h"
#include "proc.h"
#include "receiver.h"

/* ---- nats-server ---- */

static void
pub_sub_roundtrip(const char *url)
{
    natsConnection *nc = NULL;
    natsSubscription *sub = NULL;
    natsMsg *msg = NULL;

    assert_int_equal(natsConnection_ConnectTo(&nc, url), NATS_OK);
    assert_int_equal(natsConnection_SubscribeSync(&sub, nc, "smoke.hello"), NATS_OK);
    assert_int_equal(natsConnection_PublishString(nc, "smoke.hello", "hi there"), NATS_OK);
    assert_int_equal(natsSubscription_NextMsg(&msg, sub, 5000), NATS_OK);
    assert_string_equal(natsMsg_GetData(msg), "hi there");
    natsMsg_Destroy(msg);
    natsSubscription_Destroy(sub);
    natsConnection_Destroy(nc);
}

/* Adds stream name (subject "<name>.>") with the given replicas and stores one message. */
static void
add_stream_and_publish(const char *urls, const char *name, int replicas)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    jsStreamConfig sc;
    jsStreamInfo *si = NULL;
    jsPubAck *pa = NULL;
    char subj[64], filter[64];
    const char *subjects[] = {filter};

    snprintf(filter, sizeof(filter), "%s.>", name);
    snprintf(subj, sizeof(subj), "%s.one", name);
    assert_int_equal(natsConnection_ConnectTo(&nc, urls), NATS_OK);
    assert_int_equal(natsConnection_JetStream(&js, nc, NULL), NATS_OK);
    jsStreamConfig_Init(&sc);
    sc.Name = name;
    sc.Subjects = subjects;
    sc.SubjectsLen = 1;
    sc.Replicas = replicas;
    assert_int_equal(js_AddStream(&si, js, &sc, NULL, NULL), NATS_OK);
    assert_int_equal(js_Publish(&pa, js, subj, "stored", 6, NULL, NULL), NATS_OK);
    jsPubAck_Destroy(pa);
    jsStreamInfo_Destroy(si);
    fx_js_close(&nc, &js);
}

/* Messages in stream name, or -1 if its info cannot be read. */
static int64_t
stream_msgs(const char *urls, const char *name)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    jsStreamInfo *si = NULL;
    int64_t n = -1;

    if (natsConnection_ConnectTo(&nc, urls) == NATS_OK &&
        natsConnection_JetStream(&js, nc, NULL) == NATS_OK &&
        js_GetStreamInfo(&si, js, name, NULL, NULL) == NATS_OK)
        n = (int64_t)si->State.Msgs;
    jsStreamInfo_Destroy(si);
    fx_js_close(&nc, &js);
    return n;
}

static void
test_natsd_single(void **state)
{
    struct natsd srv;
    struct stat st;
    char dir[256];
    int port;

    (void)state;
    assert_int_equal(natsd_start(&srv), 0);
    assert_true(srv.port > 0 && srv.pid > 0);
    pub_sub_roundtrip(srv.url);
    add_stream_and_publish(srv.url, "SMOKE1", 1);
    port = srv.port;
    natsd_kill(&srv);
    assert_int_equal(srv.pid, 0);
    assert_int_equal(natsd_restart(&srv), 0);
    assert_int_equal(srv.port, port); /* same port, same store */
    assert_int_equal(stream_msgs(srv.url, "SMOKE1"), 1);
    snprintf(dir, sizeof(dir), "%s", srv.dir);
    natsd_stop(&srv);
    assert_int_not_equal(stat(dir, &st), 0);
}

static void
test_natsd_config(void **state)
{
    static const char conf[] = "jetstream { store_dir: \"$DIR/js\" }\n"
                               "authorization { user: smoke, password: s3cret }\n";
    struct natsd srv;
    natsConnection *nc = NULL;
    char url[128], js_dir[300];
    struct stat st;

    (void)state;
    assert_int_equal(natsd_start_config(&srv, conf), 0);
    assert_int_not_equal(natsConnection_ConnectTo(&nc, srv.url), NATS_OK); /* needs the password */
    snprintf(url, sizeof(url), "nats://smoke:s3cret@127.0.0.1:%d", srv.port);
    add_stream_and_publish(url, "SMOKE2", 1);
    snprintf(js_dir, sizeof(js_dir), "%s/js", srv.dir);
    assert_int_equal(stat(js_dir, &st), 0); /* $DIR was replaced */
    natsd_kill(&srv);
    assert_int_equal(natsd_restart(&srv), 0); /* with the same config file */
    assert_int_equal(stream_msgs(url, "SMOKE2"), 1);
    natsd_stop(&srv);
}

static int
stream_has_one(void *url)
{
    return stream_msgs(url, "SMOKE3") == 1;
}

struct node_current {
    const char *urls;
    const char *name;
};

/* 1 when the stream's info lists peer `name` as a current replica, or it leads the stream. */
static int
node_is_current(void *arg)
{
    struct node_current *w = arg;
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    jsStreamInfo *si = NULL;
    int ok = 0;

    if (natsConnection_ConnectTo(&nc, w->urls) == NATS_OK &&
        natsConnection_JetStream(&js, nc, NULL) == NATS_OK &&
        js_GetStreamInfo(&si, js, "SMOKE3", NULL, NULL) == NATS_OK && si->Cluster) {
        ok = si->Cluster->Leader && !strcmp(si->Cluster->Leader, w->name);
        for (int i = 0; i < si->Cluster->ReplicasLen; i++)
            if (!strcmp(si->Cluster->Replicas[i]->Name, w->name) &&
                si->Cluster->Replicas[i]->Current)
                ok = 1;
    }
    jsStreamInfo_Destroy(si);
    fx_js_close(&nc, &js);
    return ok;
}

static void
test_natsd_cluster(void **state)
{
    struct natsd_cluster c;
    struct node_current w;
    int port;

    (void)state;
    assert_int_equal(natsd_cluster_start(&c), 0);
    assert_non_null(strchr(c.urls, ','));
    add_stream_and_publish(c.urls, "SMOKE3", 3);
    port = c.node[1].port;
    natsd_kill(&c.node[1]);
    assert_true(wait_until(stream_has_one, c.node[0].url, 20000)); /* 2 of 3 still serve it */
    assert_int_equal(natsd_restart(&c.node[1]), 0);
    assert_int_equal(c.node[1].port, port);
    w.urls = c.urls;
    w.name = c.node[1].name;
    assert_true(wait_until(node_is_current, &w, 20000)); /* it rejoined and caught up */
    assert_int_equal(stream_msgs(c.node[1].url, "SMOKE3"), 1);
    natsd_cluster_stop(&c);
}

/* ---- HTTP receiver ---- */

static size_t
discard(char *data, size_t size, size_t n, void *arg)
{
    (void)data;
    (void)arg;
    return size * n;
}

static long
http_post(const char *url, const char *body, size_t len, const char *header, char *retry_after,
          size_t cap)
{
    CURL *h = curl_easy_init();
    struct curl_slist *hdrs = NULL;
    struct curl_header *ra = NULL;
    long code = -1;

    assert_non_null(h);
    if (header)
        hdrs = curl_slist_append(hdrs, header);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
    curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
    if (curl_easy_perform(h) == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    if (retry_after) {
        retry_after[0] = '\0';
        if (curl_easy_header(h, "Retry-After", 0, CURLH_HEADER, -1, &ra) == CURLHE_OK)
            snprintf(retry_after, cap, "%s", ra->value);
    }
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    return code;
}

/* GET with a deadline: the status, or -1 if none came within timeout_ms. */
static long
http_get(const char *url, long timeout_ms)
{
    CURL *h = curl_easy_init();
    long code = -1;

    assert_non_null(h);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
    if (curl_easy_perform(h) == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(h);
    return code;
}

static void
test_receiver_records(void **state)
{
    struct receiver *r = NULL;
    struct receiver_hit hit;
    char url[128], buf[64];
    int64_t before, after;

    (void)state;
    assert_int_equal(receiver_start(&r), 0);
    assert_int_equal(strncmp(receiver_url(r), "http://127.0.0.1:", 17), 0);
    snprintf(url, sizeof(url), "%s/hook?a=1&b=two", receiver_url(r));
    before = test_now_ms();
    assert_int_equal(http_post(url, "{\"x\":1}", 7, "X-Smoke: Yes Indeed", NULL, 0), 200);
    after = test_now_ms();
    assert_int_equal(receiver_count(r), 1);
    assert_int_equal(receiver_count_path(r, "/hook?a=1&b=two"), 1);
    assert_int_equal(receiver_count_path(r, "/hook"), 0);
    assert_int_equal(receiver_hit_copy(r, 0, &hit), 0);
    assert_true(hit.at_ms >= before && hit.at_ms <= after);
    assert_string_equal(hit.method, "POST");
    assert_string_equal(hit.path, "/hook?a=1&b=two");
    assert_int_equal(hit.body_len, 7);
    assert_memory_equal(hit.body, "{\"x\":1}", 7);
    assert_string_equal(receiver_hit_header(&hit, "x-smoke", buf, sizeof(buf)), "Yes Indeed");
    assert_string_equal(receiver_hit_header(&hit, "Content-Length", buf, sizeof(buf)), "7");
    assert_null(receiver_hit_header(&hit, "X-Absent", buf, sizeof(buf)));
    receiver_hit_free(&hit);
    assert_int_not_equal(receiver_hit_copy(r, 1, &hit), 0);
    receiver_stop(r);
}

static void
test_receiver_large_body(void **state)
{
    struct receiver *r = NULL;
    struct receiver_hit hit;
    size_t len = 1024 * 1024;
    char *body = malloc(len + 1), url[128];

    (void)state;
    assert_non_null(body);
    for (size_t i = 0; i <= len; i++)
        body[i] = (char)('a' + i % 26);
    assert_int_equal(receiver_start(&r), 0);
    snprintf(url, sizeof(url), "%s/big", receiver_url(r));
    assert_int_equal(http_post(url, body, len, NULL, NULL, 0), 200);
    assert_int_equal(receiver_hit_copy(r, 0, &hit), 0);
    assert_int_equal(hit.body_len, len);
    assert_memory_equal(hit.body, body, len);
    receiver_hit_free(&hit);
    assert_int_not_equal(http_post(url, body, len + 1, NULL, NULL, 0), 200); /* over 1 MiB */
    receiver_stop(r);
    free(body);
}

static void
test_receiver_scripted(void **state)
{
    struct receiver *r = NULL;
    char url[128], ra[32];

    (void)state;
    assert_int_equal(receiver_start(&r), 0);
    snprintf(url, sizeof(url), "%s/flaky", receiver_url(r));
    receiver_respond(r, "/flaky", 500, 1, "Retry-After: 2");
    assert_int_equal(http_post(url, "1", 1, NULL, ra, sizeof(ra)), 500);
    assert_string_equal(ra, "2");
    assert_int_equal(http_post(url, "2", 1, NULL, ra, sizeof(ra)), 200);
    assert_string_equal(ra, "");
    receiver_respond(r, "/flaky", 410, -1, NULL);
    for (int i = 0; i < 3; i++)
        assert_int_equal(http_post(url, "3", 1, NULL, NULL, 0), 410);
    receiver_respond(r, "/flaky", 200, -1, NULL);
    assert_int_equal(http_post(url, "4", 1, NULL, NULL, 0), 200);
    assert_int_equal(receiver_count_path(r, "/flaky"), 6);
    receiver_stop(r);
}

static void
test_receiver_hang_and_delay(void **state)
{
    struct receiver *r = NULL;
    char url[128];
    int64_t t0;

    (void)state;
    assert_int_equal(receiver_start(&r), 0);
    snprintf(url, sizeof(url), "%s/slow", receiver_url(r));
    receiver_hang(r, "/slow", 400);
    t0 = test_now_ms();
    assert_int_equal(http_post(url, "x", 1, NULL, NULL, 0), 200);
    assert_true(test_now_ms() - t0 >= 400);
    receiver_hang(r, "/slow", 0); /* the newest hang wins: no more hanging */
    receiver_set_delay(r, 300);
    t0 = test_now_ms();
    assert_int_equal(http_post(url, "x", 1, NULL, NULL, 0), 200);
    assert_true(test_now_ms() - t0 >= 300);
    receiver_hang(r, "/slow", 60000);
    assert_int_equal(http_get(url, 300), -1); /* the client gives up */
    t0 = test_now_ms();
    receiver_stop(r); /* and the hanging answer does not hold the stop for a minute */
    assert_true(test_now_ms() - t0 < 5000);
}

static void
test_receiver_concurrency(void **state)
{
    struct receiver *r = NULL;
    CURLM *m = curl_multi_init();
    CURL *h[4];
    char url[128];
    int running = 1;

    (void)state;
    assert_int_equal(receiver_start(&r), 0);
    receiver_set_delay(r, 500);
    snprintf(url, sizeof(url), "%s/parallel", receiver_url(r));
    for (int i = 0; i < 4; i++) {
        h[i] = curl_easy_init();
        curl_easy_setopt(h[i], CURLOPT_URL, url);
        curl_easy_setopt(h[i], CURLOPT_TIMEOUT, 30L);
        curl_easy_setopt(h[i], CURLOPT_NOPROXY, "*");
        curl_easy_setopt(h[i], CURLOPT_WRITEFUNCTION, discard);
        curl_multi_add_handle(m, h[i]);
    }
    for (int i = 0; running && i < 10000; i++) { /* bounded by CURLOPT_TIMEOUT too */
        curl_multi_perform(m, &running);
        curl_multi_poll(m, NULL, 0, 100, NULL);
    }
    assert_int_equal(running, 0);
    assert_int_equal(receiver_count_path(r, "/parallel"), 4);
    assert_int_equal(receiver_max_concurrent(r), 4);
    for (int i = 0; i < 4; i++) {
        curl_multi_remove_handle(m, h[i]);
        curl_easy_cleanup(h[i]);
    }
    curl_multi_cleanup(m);
    receiver_stop(r);
}

/* ---- processes ---- */

static void
test_proc_run(void **state)
{
    char *echo[] = {"/bin/echo", "hi", NULL};
    char *cat[] = {"/bin/cat", NULL};
    char *sh[] = {"/bin/sh", "-c", "echo \"$SMOKE_VAR\" >&2; exit 3", NULL};
    char *sleepy[] = {"/bin/sleep", "30", NULL};
    char *env[] = {"SMOKE_VAR=from env_extra", NULL};
    char out[64], err[64];
    int64_t t0;

    (void)state;
    assert_int_equal(proc_run(echo, NULL, NULL, out, sizeof(out), err, sizeof(err), 10000), 0);
    assert_string_equal(out, "hi\n");
    assert_string_equal(err, "");
    assert_int_equal(
        proc_run(cat, NULL, "line one\nline two\n", out, sizeof(out), err, sizeof(err), 10000), 0);
    assert_string_equal(out, "line one\nline two\n");
    assert_int_equal(proc_run(sh, env, NULL, out, sizeof(out), err, sizeof(err), 10000), 3);
    assert_string_equal(err, "from env_extra\n");
    assert_int_equal(proc_run(echo, NULL, NULL, out, 2, err, sizeof(err), 10000), 0);
    assert_string_equal(out, "h"); /* truncated to cap */
    t0 = test_now_ms();
    assert_int_equal(proc_run(sleepy, NULL, NULL, out, sizeof(out), err, sizeof(err), 300), -1);
    assert_true(test_now_ms() - t0 < 10000);
}

static int
file_has_ready(void *arg)
{
    return proc_count_lines((const char *)arg, "ready") >= 1;
}

static void
test_proc_spawn(void **state)
{
    char dir[64], *text;
    char *argv[] = {"/bin/sh", "-c", "echo \"ready $SMOKE_VAR\"; echo ready again; exec sleep 60",
                    NULL};
    char *env[] = {"SMOKE_VAR=42", NULL};
    struct proc p;

    (void)state;
    assert_int_equal(test_mkdtemp(dir, sizeof(dir)), 0);
    assert_int_equal(proc_spawn(&p, dir, "child", argv, env), 0);
    assert_true(wait_until(file_has_ready, p.out_path, 10000));
    assert_int_equal(proc_count_lines(p.out_path, "ready"), 2);
    text = proc_read_file(p.out_path);
    assert_non_null(text);
    assert_string_equal(text, "ready 42\nready again\n");
    free(text);
    assert_true(proc_alive(&p));
    assert_int_equal(proc_wait(&p, 100), -1);
    assert_int_equal(proc_signal(&p, SIGTERM), 0);
    assert_int_equal(proc_wait(&p, 10000), 128 + SIGTERM);
    assert_false(proc_alive(&p));
    assert_int_equal(proc_spawn(&p, dir, "victim", argv, NULL), 0);
    proc_kill9(&p);
    assert_int_equal(p.status, 128 + SIGKILL);
    assert_null(proc_read_file("/nonexistent/sendat-smoke"));
    test_rmtree(dir);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_natsd_single),
        cmocka_unit_test(test_natsd_config),
        cmocka_unit_test(test_natsd_cluster),
        cmocka_unit_test(test_receiver_records),
        cmocka_unit_test(test_receiver_large_body),
        cmocka_unit_test(test_receiver_scripted),
        cmocka_unit_test(test_receiver_hang_and_delay),
        cmocka_unit_test(test_receiver_concurrency),
        cmocka_unit_test(test_proc_run),
        cmocka_unit_test(test_proc_spawn),
    };

    return FX_RUN(tests);
}
