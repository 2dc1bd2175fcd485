/* The client side of the `sendat serve` tests: a fleet of one consumer, a server with a
 * reader, a producer and an admin token, requests over one keep-alive connection, and the
 * check every test_api* program ends with (its answers as docs/openapi.yaml says). */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "api_client.h"
#include "check.h"

struct fx F;
struct proc api;
char base[64];
static char tokens_env[340], tokens_path[300];
char reader[64], producer[64], admin[64];
static CURL *http; /* one handle: requests reuse its connection (keep-alive) */
static char answers_path[300];

/* Appends a JSON answer to the answers file for check_responses.py. */
static void
record(const char *method, const char *path, long status, const char *body)
{
    json_t *doc = json_loads(body, 0, NULL), *line;
    char full[600];
    FILE *f;

    if (!doc || !(f = fopen(answers_path, "a"))) {
        json_decref(doc);
        return;
    }
    snprintf(full, sizeof(full), "/v1%s", path);
    line = json_pack("{s:s, s:s, s:i, s:o}", "method", method, "path", full, "status", (int)status,
                     "body", doc);
    json_dumpf(line, f, JSON_COMPACT);
    fputc('\n', f);
    fclose(f);
    json_decref(line);
}

const char *
api_answers_path(void)
{
    return answers_path;
}

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

long
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
    record(method, path, a.status, a.body);
    if (doc) {
        *doc = json_loads(a.body, 0, NULL);
        if (!*doc)
            fail_msg("%s %s answered %ld with no JSON: %s", method, path, a.status, a.body);
    }
    return a.status;
}

void
make_token(const char *role, char *out, size_t cap)
{
    char err[512];

    assert_int_equal(
        fx_sendat(&F, out, cap, err, sizeof(err), "token", "create", "--role", role, NULL), 0);
    out[strcspn(out, "\n")] = '\0';
    assert_true(strncmp(out, "sat_", 4) == 0);
}

static int
port_known(void *arg)
{
    return api_port_in_log(arg) > 0;
}

int
api_port_in_log(const struct proc *p)
{
    char *log = proc_read_file(p->err_path), *at;
    int port = 0;

    if (log && (at = strstr(log, "event=api_listening")) && (at = strstr(at, " port=")))
        port = atoi(at + 6);
    free(log);
    return port;
}

int
api_serve(struct proc *p, const char *name, const char *e1, const char *e2, const char *e3)
{
    char *argv[] = {(char *)fx_sendat_bin(), "serve", NULL};
    char *env[] = {F.env_url,  F.env_key,  tokens_env, "SENDAT_API_ADDR=127.0.0.1:0",
                   (char *)e1, (char *)e2, (char *)e3, NULL};

    assert_int_equal(proc_spawn(p, F.dir, name, argv, env), 0);
    assert_true(wait_until(port_known, p, 30000));
    return api_port_in_log(p);
}

int
api_setup(void **state)
{
    (void)state;
    fx_start(&F, 0);
    fx_consumer(&F, 0, NULL);
    snprintf(tokens_path, sizeof(tokens_path), "%s/tokens", F.dir);
    snprintf(answers_path, sizeof(answers_path), "%s/answers.ndjson", F.dir);
    snprintf(tokens_env, sizeof(tokens_env), "SENDAT_API_TOKENS_FILE=%s", tokens_path);
    setenv("SENDAT_API_TOKENS_FILE", tokens_path, 1);
    make_token("reader", reader, sizeof(reader));
    make_token("producer", producer, sizeof(producer));
    make_token("admin", admin, sizeof(admin));
    snprintf(base, sizeof(base), "http://127.0.0.1:%d/v1",
             api_serve(&api, "api", NULL, NULL, NULL));
    http = curl_easy_init();
    return 0;
}

int
api_teardown(void **state)
{
    (void)state;
    curl_easy_cleanup(http);
    proc_signal(&api, SIGTERM);
    assert_int_equal(proc_wait(&api, 30000), 0);
    fx_finish(&F);
    return 0;
}

void
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

int
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

struct shows {
    const char *id, *name;
};

static int
shows_now(void *arg)
{
    const struct shows *w = arg;
    char path[160];
    json_t *doc = NULL;
    int yes;

    snprintf(path, sizeof(path), "/tasks/%s", w->id);
    yes = call("GET", path, reader, NULL, &doc) == 200 && has_event(doc, w->name);
    json_decref(doc);
    return yes;
}

int
task_shows(const char *id, const char *name, int64_t timeout_ms)
{
    struct shows w = {id, name};

    return wait_until(shows_now, &w, timeout_ms);
}

void
book(const char *body, char *id, size_t cap)
{
    json_t *doc = NULL;

    if (call("POST", "/tasks", producer, body, &doc) != 201)
        fail_msg("booking refused: %s", json_dumps(doc, 0));
    snprintf(id, cap, "%s", json_string_value(json_object_get(doc, "id")));
    json_decref(doc);
}

void
all_pages(const char *first, const char *key, void (*check)(json_t *item), char *out, size_t cap)
{
    char path[512];
    json_t *doc = NULL, *next, *item;
    size_t used = 0, i;

    assert_true(snprintf(path, sizeof(path), "%s", first) < (int)sizeof(path));
    out[0] = '\0';
    for (int pages = 0; pages < 50; pages++) {
        assert_int_equal(call("GET", path, reader, NULL, &doc), 200);
        json_array_foreach(json_object_get(doc, key), i, item)
        {
            if (check)
                check(item);
            used += (size_t)snprintf(out + used, cap - used, "%s ",
                                     json_string_value(json_object_get(item, "id")));
        }
        next = json_object_get(doc, "next_cursor");
        if (json_is_null(next)) {
            json_decref(doc);
            return;
        }
        assert_true(snprintf(path, sizeof(path), "%s&cursor=%s", first, json_string_value(next)) <
                    (int)sizeof(path));
        json_decref(doc);
    }
    fail_msg("the cursor never ended");
}

void
test_openapi_served_and_answers_match(void **state)
{
    char source[600], served[600], cmd[2048];
    json_t *doc = NULL, *file;
    FILE *f;

    (void)state;
    snprintf(source, sizeof(source), "%s/../../producer/openapi.json", getenv("SENDAT_SUPPORT"));
    file = json_load_file(source, 0, NULL);
    assert_non_null(file);
    assert_int_equal(call("GET", "/openapi.json", NULL, NULL, &doc), 200);
    assert_true(json_equal(doc, file));
    snprintf(served, sizeof(served), "%s/openapi-served.json", F.dir);
    f = fopen(served, "w");
    assert_non_null(f);
    json_dumpf(doc, f, 0);
    fclose(f);
    json_decref(doc);
    json_decref(file);
    assert_int_equal(call("GET", "/nothing-here", reader, NULL, &doc), 404);
    check_error(doc, 404, NULL);
    snprintf(cmd, sizeof(cmd), "python3 %s/../openapi/check_responses.py %s %s",
             getenv("SENDAT_SUPPORT"), served, api_answers_path());
    int rc = system(cmd);
    if (WIFEXITED(rc) && WEXITSTATUS(rc) == 77)
        skip();
    assert_int_equal(rc, 0);
}
