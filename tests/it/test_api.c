/* `sendat serve` as an application server uses it (issue 13): bearer tokens with roles (401
 * without, saying no more; 403 for a role too small, naming the role needed), booking with an id
 * that is an idempotency key, a task's history, exact cancel (200 / 409 / 404), NDJSON batches with
 * one result per line, one error shape naming the field, tokens listed and revoked, and the
 * tokens file read again once it changed and on SIGHUP. */
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

#include "api_client.h"
#include "check.h"
#include "layout.h"
#include "tls.h"

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
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(doc, "error"), "message")),
        "forbidden: this needs a producer token (this one is reader)");
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
             "{\"at\":\"@%" PRId64
             "\",\"webhook\":\"%s/api-once\",\"data\":\"{}\",\"id\":\"order-42\"}",
             test_now_ms() / 1000 + 3, receiver_url(F.recv));
    assert_int_equal(call("POST", "/tasks", producer, body, &doc), 201);
    assert_string_equal(json_string_value(json_object_get(doc, "id")), "order-42");
    json_decref(doc);
    assert_int_equal(call("POST", "/tasks", producer, body, &doc), 200); /* a client's retry */
    assert_true(json_is_true(json_object_get(doc, "already_scheduled")));
    json_decref(doc);
    assert_true(receiver_wait(F.recv, "/api-once", 1, 30000));
    assert_true(task_shows("order-42", "sent", 10000));
    assert_int_equal(call("GET", "/tasks/order-42", reader, NULL, &doc), 200);
    assert_true(has_event(doc, "due"));
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
    assert_int_equal(
        call("POST", "/tasks", producer, "{\"at\":5,\"webhook\":\"http://127.0.0.1:1/\"}", &doc),
        400); /* a wrong type */
    check_error(doc, 400, "at");
    {
        size_t n = 300 * 1024; /* a webhook body over its 256 KiB: 400 naming data */
        char *big = malloc(n + 128), *huge = malloc(2 * 1024 * 1024 + 64);
        assert_non_null(big);
        assert_non_null(huge);
        snprintf(big, n + 128,
                 "{\"at\":\"+1h\",\"webhook\":\"http://127.0.0.1:1/\",\"data\":\"%0*d\"}", (int)n,
                 0);
        assert_int_equal(call("POST", "/tasks", producer, big, &doc), 400);
        check_error(doc, 400, "data");
        memset(huge, 'x', 2 * 1024 * 1024); /* a request over the server's 1 MiB: 413 */
        huge[2 * 1024 * 1024] = '\0';
        assert_int_equal(call("POST", "/tasks", producer, huge, &doc), 413);
        check_error(doc, 413, NULL);
        free(big);
        free(huge);
    }
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
    assert_int_equal(call("POST", "/tasks", producer,
                          "{\"at\":\"+1h\",\"webhook\":\"http://127.0.0.1:1/\",\"group\":\"a.b\"}",
                          &doc),
                     400);
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
    assert_non_null(strstr(text, "\"cron\": \"0 7 * * *\", \"tz\": \"UTC\", \"next\": \"20"));
    free(text);
    json_decref(doc);
    assert_int_equal(call("POST", "/series/nope/resume", producer, NULL, NULL), 404);
    snprintf(path, sizeof(path), "/series/%s/resume", series);
    assert_int_equal(call("POST", path, producer, NULL, NULL), 200);
    snprintf(path, sizeof(path), "/series/%s/ahead", series);
    assert_int_equal(call("GET", path, reader, NULL, &doc), 200);
    assert_string_equal(json_string_value(json_object_get(doc, "state")), "active");
    assert_int_equal(json_array_size(json_object_get(doc, "ahead")), 5);
    json_decref(doc);
    snprintf(path, sizeof(path), "/tasks/%s", series);
    assert_int_equal(call("DELETE", path, producer, NULL, NULL), 200);
    snprintf(path, sizeof(path), "/series/%s/ahead", series); /* issue 28: none once cancelled */
    assert_int_equal(call("GET", path, reader, NULL, &doc), 200);
    assert_string_equal(json_string_value(json_object_get(doc, "state")), "cancelled");
    assert_int_equal(json_array_size(json_object_get(doc, "ahead")), 0);
    json_decref(doc);
    snprintf(path, sizeof(path), "/series/%s/pause", series);
    assert_int_equal(call("POST", path, producer, NULL, NULL), 409);
}

static int
reloaded(void *arg)
{
    (void)arg;
    return proc_count_lines(api.err_path, "event=reloaded") > 0;
}

/* A token made while the server runs is good at once (the changed file is read again at the
 * next request), and SIGHUP still reads the tokens and the key file. */
static void
test_sighup_reads_new_tokens(void **state)
{
    char late[64];

    (void)state;
    make_token("reader", late, sizeof(late));
    assert_int_equal(call("GET", "/tasks/x", late, NULL, NULL), 404);
    proc_signal(&api, SIGHUP);
    assert_true(wait_until(reloaded, NULL, 20000));
    assert_int_equal(call("GET", "/tasks/x", late, NULL, NULL), 404);
}

/* The id `sendat token list` shows on the line naming name, into id. */
static void
listed_id(const char *list, const char *name, char id[16])
{
    char want[80];
    const char *at, *line;

    snprintf(want, sizeof(want), "  %s ", name);
    at = strstr(list, want);
    if (!at)
        fail_msg("token list lacks %s:\n%s", name, list);
    for (line = at; line > list && line[-1] != '\n'; line--)
        ;
    snprintf(id, 16, "%.*s", (int)strcspn(line, " "), line);
}

/* sendat token list and revoke (issue 34): the list shows ids, roles and names, never a
 * token; a revoked token gets 401 at once, the others go on; a name two tokens share and an
 * unknown id are refused. */
static void
test_token_list_and_revoke(void **state)
{
    char doomed[64], twin[64], out[8192], err[1024], id[16];

    (void)state;
    assert_int_equal(fx_sendat(&F, doomed, sizeof(doomed), NULL, 0, "token", "create", "--role",
                               "reader", "--name", "doomed", NULL),
                     0);
    doomed[strcspn(doomed, "\n")] = '\0';
    for (int i = 0; i < 2; i++)
        assert_int_equal(fx_sendat(&F, twin, sizeof(twin), NULL, 0, "token", "create", "--role",
                                   "reader", "--name", "twin", NULL),
                         0);
    assert_int_equal(call("GET", "/whoami", doomed, NULL, NULL), 200);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "token", "list", NULL), 0);
    assert_non_null(strstr(out, "ROLE"));
    assert_null(strstr(out, "sat_")); /* hashes only */
    listed_id(out, "doomed", id);
    assert_int_equal(strlen(id), 12);
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "token", "revoke", "twin", NULL), 2);
    assert_non_null(strstr(err, "twin names 2 tokens"));
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "token", "revoke",
                               "0000000000000000", NULL),
                     4);
    assert_non_null(strstr(err, "unknown token"));
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "token", "revoke", id, NULL),
                     0);
    assert_int_equal(call("GET", "/whoami", doomed, NULL, NULL), 401);
    assert_int_equal(call("GET", "/whoami", reader, NULL, NULL), 200); /* the others stay */
    assert_int_equal(call("GET", "/whoami", twin, NULL, NULL), 200);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "token", "list", NULL), 0);
    assert_null(strstr(out, "doomed"));
}

/* Plain HTTP only on loopback (unless SENDAT_API_INSECURE=1); HTTPS from PEM files. */
static void
test_listening_plain_or_tls(void **state)
{
    char *argv[] = {(char *)fx_sendat_bin(), "serve", NULL};
    char tokens_env[340], out[256], err[2048];
    struct tls_pair tls;
    struct proc https = {0};
    long status = 0;
    int port;

    (void)state;
    snprintf(tokens_env, sizeof(tokens_env), "SENDAT_API_TOKENS_FILE=%s",
             getenv("SENDAT_API_TOKENS_FILE"));
    {
        char *env[] = {F.env_url, F.env_key, tokens_env, "SENDAT_API_ADDR=0.0.0.0:0", NULL};
        assert_int_equal(proc_run(argv, env, NULL, out, sizeof(out), err, sizeof(err), 30000), 2);
        assert_non_null(strstr(err, "SENDAT_API_INSECURE"));
    }
    assert_int_equal(tls_pair_make(&tls, F.dir, "api"), 0);
    port = api_serve(&https, "https", tls.cert_env, tls.key_env, NULL);
    assert_int_equal(
        tls_get(port, "/v1/openapi.json", tls.cert, CURL_SSLVERSION_DEFAULT, &status, NULL),
        CURLE_OK);
    assert_int_equal(status, 200);
    proc_signal(&https, SIGTERM);
    assert_int_equal(proc_wait(&https, 30000), 0);
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
        cmocka_unit_test(test_token_list_and_revoke),
        cmocka_unit_test(test_listening_plain_or_tls),
        cmocka_unit_test(test_groups_and_series_pause),
    };
    return fx_run(tests, sizeof(tests) / sizeof(tests[0]), api_setup, api_teardown);
}
