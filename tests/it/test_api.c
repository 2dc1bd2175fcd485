/* `sendat serve` as an application server uses it (issue 13): bearer tokens with roles (401
 * without, 403 for a role too small, neither saying more), booking with an id that is an
 * idempotency key, a task's history, exact cancel (200 / 409 / 404), NDJSON batches with one
 * result per line, one error shape naming the field, and tokens read again on SIGHUP. */
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <jansson.h>

#include "check.h"
#include "fixture.h"
#include "layout.h"

static struct fx F;
static struct proc api;
static char base[64], tokens_env[340], tokens_path[300];
static char reader[64], producer[64], admin[64];
static CURL *http; /* one handle: requests reuse its connection (keep-alive) */

struct answer {
    long status;
    char body[65536];
    size_t len;
};

static size_t
collect(char *data, size_t size, size_t n, void *arg)
{
    struct answer *a = arg;
    size_t len = size * n, room = sizeof(a->body) - 1 - a->len;

    memcpy(a->body + a->len, data, len < room ? len : room);
    a->len += len < room ? len : room;
    a->body[a->len] = '\0';
    return len;
}

/* One request; token may be NULL. The answer's JSON is parsed into *doc (NULL if none). */
static long
call(const char *method, const char *path, const char *token, const char *body, json_t **doc)
{
    static struct answer a;
    struct curl_slist *h = NULL;
    char url[512], auth[128];

    memset(&a, 0, sizeof(a));
    snprintf(url, sizeof(url), "%s%s", base, path);
    if (token) {
        snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
        h = curl_slist_append(h, auth);
    }
    curl_easy_reset(http);
    curl_easy_setopt(http, CURLOPT_URL, url);
    curl_easy_setopt(http, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(http, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(http, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(http, CURLOPT_WRITEDATA, &a);
    curl_easy_setopt(http, CURLOPT_TIMEOUT, 60L);
    if (body)
        curl_easy_setopt(http, CURLOPT_POSTFIELDS, body);
    assert_int_equal(curl_easy_perform(http), CURLE_OK);
    curl_easy_getinfo(http, CURLINFO_RESPONSE_CODE, &a.status);
    curl_slist_free_all(h);
    if (doc) {
        *doc = json_loads(a.body, 0, NULL);
        if (!*doc)
            fail_msg("%s %s answered %ld with no JSON: %s", method, path, a.status, a.body);
    }
    return a.status;
}

static void
make_token(const char *role, char *out, size_t cap)
{
    char err[512];

    assert_int_equal(
        fx_sendat(&F, out, cap, err, sizeof(err), "token", "create", "--role", role, NULL), 0);
    out[strcspn(out, "\n")] = '\0';
    assert_true(strncmp(out, "sat_", 4) == 0);
}

static int
api_port(void *arg)
{
    char *log = proc_read_file(api.err_path), *at;
    int port = 0;

    (void)arg;
    if (log && (at = strstr(log, "event=api_listening")) && (at = strstr(at, " port=")))
        port = atoi(at + 6);
    free(log);
    if (port > 0)
        snprintf(base, sizeof(base), "http://127.0.0.1:%d/v1", port);
    return port > 0;
}

static int
setup(void **state)
{
    char *argv[] = {(char *)fx_sendat_bin(), "serve", NULL};
    char *env[] = {F.env_url, F.env_key, tokens_env, "SENDAT_API_ADDR=127.0.0.1:0", NULL};

    (void)state;
    fx_start(&F, 0);
    fx_consumer(&F, 0, NULL);
    snprintf(tokens_path, sizeof(tokens_path), "%s/tokens", F.dir);
    snprintf(tokens_env, sizeof(tokens_env), "SENDAT_API_TOKENS_FILE=%s", tokens_path);
    setenv("SENDAT_API_TOKENS_FILE", tokens_path, 1);
    make_token("reader", reader, sizeof(reader));
    make_token("producer", producer, sizeof(producer));
    make_token("admin", admin, sizeof(admin));
    assert_int_equal(proc_spawn(&api, F.dir, "api", argv, env), 0);
    assert_true(wait_until(api_port, NULL, 30000));
    http = curl_easy_init();
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    curl_easy_cleanup(http);
    proc_signal(&api, SIGTERM);
    assert_int_equal(proc_wait(&api, 30000), 0);
    fx_finish(&F);
    return 0;
}

/* Whether a task's history (GET /v1/tasks/{id}) holds an event called name. */
static int
has_event(json_t *doc, const char *name)
{
    size_t i;
    json_t *e;

    json_array_foreach(json_object_get(doc, "events"), i, e)
    {
        if (!strcmp(json_string_value(json_object_get(e, "event")), name))
            return 1;
    }
    return 0;
}

static void
check_error(json_t *doc, long status, const char *field)
{
    json_t *e = json_object_get(doc, "error");

    assert_non_null(e);
    assert_int_equal(json_integer_value(json_object_get(e, "status")), status);
    assert_true(json_is_string(json_object_get(e, "message")));
    if (field) {
        assert_non_null(json_string_value(json_object_get(e, "field")));
        assert_string_equal(json_string_value(json_object_get(e, "field")), field);
    }
    json_decref(doc);
}

static void
test_tokens_and_roles(void **state)
{
    json_t *doc = NULL;

    (void)state;
    assert_int_equal(call("GET", "/tasks/x", NULL, NULL, &doc), 401);
    check_error(doc, 401, NULL);
    assert_int_equal(call("GET", "/tasks/x", "sat_not-a-token-at-all", NULL, &doc), 401);
    check_error(doc, 401, NULL);
    assert_int_equal(call("POST", "/tasks", reader, "{}", &doc), 403);
    check_error(doc, 403, NULL);
    assert_int_equal(call("GET", "/tasks/no-such-task", reader, NULL, &doc), 404);
    check_error(doc, 404, NULL);
}

static void
test_book_with_an_idempotency_key_then_status(void **state)
{
    char body[512];
    json_t *doc = NULL;

    (void)state;
    snprintf(body, sizeof(body), /* an absolute due time: a retry must describe the same task */
             "{\"at\":\"@%" PRId64 "\",\"webhook\":\"%s/api-once\",\"data\":\"{}\",\"id\":\"order-42\"}",
             test_now_ms() / 1000 + 3, receiver_url(F.recv));
    assert_int_equal(call("POST", "/tasks", producer, body, &doc), 201);
    assert_string_equal(json_string_value(json_object_get(doc, "id")), "order-42");
    json_decref(doc);
    assert_int_equal(call("POST", "/tasks", producer, body, &doc), 200); /* a client's retry */
    assert_true(json_is_true(json_object_get(doc, "already_scheduled")));
    json_decref(doc);
    assert_true(receiver_wait(F.recv, "/api-once", 1, 30000));
    assert_int_equal(call("GET", "/tasks/order-42", reader, NULL, &doc), 200);
    assert_true(has_event(doc, "due") && has_event(doc, "sent"));
    json_decref(doc);
    assert_int_equal(receiver_count_path(F.recv, "/api-once"), 1);
    assert_int_equal(call("DELETE", "/tasks/order-42", producer, NULL, &doc), 409);
    assert_string_equal(json_string_value(json_object_get(doc, "result")), "too late");
    assert_true(json_is_string(json_object_get(doc, "sent_at")));
    json_decref(doc);
}

static void
test_cancel_exactly(void **state)
{
    char body[512], path[128];
    json_t *doc = NULL;

    (void)state;
    snprintf(body, sizeof(body), "{\"at\":\"+1h\",\"webhook\":\"%s/never\"}", receiver_url(F.recv));
    assert_int_equal(call("POST", "/tasks", producer, body, &doc), 201);
    snprintf(path, sizeof(path), "/tasks/%s", json_string_value(json_object_get(doc, "id")));
    json_decref(doc);
    assert_int_equal(call("DELETE", path, reader, NULL, NULL), 403);
    assert_int_equal(call("DELETE", path, producer, NULL, &doc), 200);
    assert_string_equal(json_string_value(json_object_get(doc, "result")), "cancelled");
    json_decref(doc);
    assert_int_equal(call("DELETE", "/tasks/never-booked", producer, NULL, NULL), 404);
    assert_int_equal(call("GET", path, reader, NULL, &doc), 200);
    assert_true(has_event(doc, "cancelled"));
    json_decref(doc);
}

static void
test_errors_name_the_field(void **state)
{
    json_t *doc = NULL;

    (void)state;
    assert_int_equal(call("POST", "/tasks", producer,
                          "{\"at\":\"yesterday\",\"webhook\":\"http://127.0.0.1:1/\"}", &doc),
                     400);
    check_error(doc, 400, "at");
    assert_int_equal(call("POST", "/tasks", producer,
                          "{\"at\":\"+1h\",\"webhook\":\"http://127.0.0.1:1/\",\"colour\":\"red\"}",
                          &doc),
                     400);
    check_error(doc, 400, "colour");
    assert_int_equal(call("POST", "/tasks", producer, "not json", &doc), 400);
    check_error(doc, 400, NULL);
}

static void
test_batch_one_result_per_line(void **state)
{
    char body[1024];
    json_t *doc = NULL, *results;

    (void)state;
    snprintf(body, sizeof(body),
             "{\"at\":\"+1s\",\"webhook\":\"%s/b1\"}\n"
             "not json\n"
             "{\"at\":\"+1s\",\"webhook\":\"%s/b2\"}\n"
             "{\"at\":\"+1s\"}\n",
             receiver_url(F.recv), receiver_url(F.recv));
    assert_int_equal(call("POST", "/batches", producer, body, &doc), 200);
    results = json_object_get(doc, "results");
    assert_int_equal(json_array_size(results), 4);
    assert_true(json_is_string(json_object_get(json_array_get(results, 0), "id")));
    assert_non_null(json_object_get(json_array_get(results, 1), "error"));
    assert_true(json_is_string(json_object_get(json_array_get(results, 2), "id")));
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_array_get(results, 3), "error"), "field")),
                        "webhook");
    assert_int_equal(json_integer_value(json_object_get(doc, "scheduled")), 2);
    json_decref(doc);
    assert_true(receiver_wait(F.recv, "/b1", 1, 30000));
    assert_true(receiver_wait(F.recv, "/b2", 1, 30000));
}

/* A group booked over the API and cancelled by DELETE /v1/groups/{name}; a series paused,
 * listed and resumed by its routes (pause and resume are the producer's, 404 for an unknown id,
 * 409 once the series is cancelled). */
static void
test_groups_and_series_pause(void **state)
{
    char body[512], path[160], series[80], *text = NULL;
    json_t *doc = NULL;

    (void)state;
    snprintf(body, sizeof(body), "{\"at\":\"+1h\",\"webhook\":\"%s/grp\",\"group\":\"api-g\"}",
             receiver_url(F.recv));
    assert_int_equal(call("POST", "/tasks", producer, body, NULL), 201);
    assert_int_equal(call("POST", "/tasks", producer, body, NULL), 201);
    assert_int_equal(call("POST", "/tasks", producer, "{\"at\":\"+1h\",\"webhook\":\"http://127.0.0.1:1/\",\"group\":\"a.b\"}",
                          &doc), 400);
    check_error(doc, 400, "group");
    assert_int_equal(call("DELETE", "/groups/api-g", reader, NULL, NULL), 403);
    assert_int_equal(call("DELETE", "/groups/api-g", producer, NULL, &doc), 200);
    assert_int_equal(json_integer_value(json_object_get(doc, "cancelled")), 2);
    assert_int_equal(json_integer_value(json_object_get(doc, "too_late")), 0);
    json_decref(doc);
    snprintf(body, sizeof(body), "{\"cron\":\"0 7 * * *\",\"tz\":\"UTC\",\"webhook\":\"%s/s\"}",
             receiver_url(F.recv));
    assert_int_equal(call("POST", "/tasks", producer, body, &doc), 201);
    snprintf(series, sizeof(series), "%s", json_string_value(json_object_get(doc, "id")));
    json_decref(doc);
    snprintf(path, sizeof(path), "/series/%s/pause", series);
    assert_int_equal(call("POST", path, reader, NULL, NULL), 403);
    assert_int_equal(call("POST", path, producer, NULL, NULL), 200);
    assert_int_equal(call("GET", "/series", reader, NULL, &doc), 200);
    text = json_dumps(doc, 0);
    assert_non_null(strstr(text, "paused"));
    free(text);
    json_decref(doc);
    assert_int_equal(call("POST", "/series/nope/resume", producer, NULL, NULL), 404);
    snprintf(path, sizeof(path), "/series/%s/resume", series);
    assert_int_equal(call("POST", path, producer, NULL, NULL), 200);
    snprintf(path, sizeof(path), "/tasks/%s", series);
    assert_int_equal(call("DELETE", path, producer, NULL, NULL), 200);
    snprintf(path, sizeof(path), "/series/%s/pause", series);
    assert_int_equal(call("POST", path, producer, NULL, NULL), 409);
}

static int
reloaded(void *arg)
{
    (void)arg;
    return proc_count_lines(api.err_path, "event=reloaded") > 0;
}

static void
test_sighup_reads_new_tokens(void **state)
{
    char late[64];

    (void)state;
    make_token("reader", late, sizeof(late));
    assert_int_equal(call("GET", "/tasks/x", late, NULL, NULL), 401); /* not read yet */
    proc_signal(&api, SIGHUP);
    assert_true(wait_until(reloaded, NULL, 20000));
    assert_int_equal(call("GET", "/tasks/x", late, NULL, NULL), 404);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tokens_and_roles),
        cmocka_unit_test(test_book_with_an_idempotency_key_then_status),
        cmocka_unit_test(test_cancel_exactly),
        cmocka_unit_test(test_errors_name_the_field),
        cmocka_unit_test(test_batch_one_result_per_line),
        cmocka_unit_test(test_sighup_reads_new_tokens),
        cmocka_unit_test(test_groups_and_series_pause),
    };
    return fx_run(tests, sizeof(tests) / sizeof(tests[0]), setup, teardown);
}
