/* `sendat serve` under hostile clients (issue 24.4): the token is checked from the head before
 * a byte of the body is read, each route has its own ceiling, a batch is read line by line,
 * one address holds a few connections and must finish a request head in time, a token has a
 * request rate, TLS is 1.2 at least with HSTS, every answer is logged once, and a reader sees
 * one class for every failed connection; a token holds a share of connections and a body has
 * a deadline, and junk batches give their memory back. Clients come from 127.0.0.1-3,
 * 127.0.2.1-40 and 127.0.3.1-34. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "api_client.h"
#include "check.h"
#include "dial.h"
#include "rawhttp.h"
#include "tls.h"

#define SLOW 12 /* connections one address opens against a cap of 4 */

static void
test_token_and_size_checked_before_the_body(void **state)
{
    (void)state;
    assert_int_equal(rawhttp_head_only("POST", "/batches", NULL, 8L << 20), 401);
    assert_int_equal(rawhttp_head_only("POST", "/batches", "sat_not_a_token", 8L << 20), 401);
    assert_int_equal(rawhttp_head_only("POST", "/batches", reader, 8L << 20), 403);
    assert_int_equal(rawhttp_head_only("POST", "/batches", producer, 65L << 20), 413);
    assert_int_equal(rawhttp_head_only("POST", "/tasks", producer, 2L << 20), 413);
    assert_int_equal(rawhttp_head_only("POST", "/dead-letters/x/replay", admin, 1L << 20), 413);
}

/* The peak resident size of the server, in KiB. */
static long
peak_kib(void)
{
    return rawhttp_status_kib(&api, "VmHWM:");
}

/* A 24 MiB batch of blank lines leaves the server's peak size almost where it was: only the
 * line under way is held (the whole body was before). */
static void
test_batch_read_line_by_line(void **state)
{
    size_t size = 24u << 20;
    char *body = malloc(size + 1);
    long before = peak_kib(), after;
    json_t *doc = NULL;

    (void)state;
    assert_non_null(body);
    memset(body, ' ', size);
    for (size_t i = 1023; i < size; i += 1024)
        body[i] = '\n';
    body[size] = '\0';
    assert_true(before > 0);
    assert_int_equal(call("POST", "/batches", producer, body, &doc), 200);
    assert_int_equal(json_integer_value(json_object_get(doc, "scheduled")), 0);
    assert_int_equal(json_integer_value(json_object_get(doc, "refused")), 0);
    json_decref(doc);
    free(body);
    after = peak_kib();
    if (after - before > 12 * 1024)
        fail_msg("the server's peak grew by %ld KiB for a 24 MiB batch", after - before);
    assert_int_equal(call("POST", "/batches", producer,
                          "{\"at\":\"+1h\",\"webhook\":\"http://127.0.0.1:9/a\"}\n"
                          "not json\n{\"at\":\"+1h\",\"webhook\":\"http://127.0.0.1:9/b\"}",
                          &doc),
                     200);
    assert_int_equal(json_integer_value(json_object_get(doc, "scheduled")), 2);
    assert_int_equal(json_integer_value(json_object_get(doc, "refused")), 1);
    json_decref(doc);
}

/* The three answers of test_every_answer_logged_once are in the log (a line is written once
 * the answer is queued, so it may land just after the client has it). */
static int
three_logged(void *arg)
{
    (void)arg;
    return proc_count_lines(api.err_path, "route=/v1/no-such-thing status=404") > 0 &&
           proc_count_lines(api.err_path, "route=/v1/whoami status=401") > 0 &&
           proc_count_lines(api.err_path, "route=/v1/tasks/{id} status=404") > 0;
}

/* Every answer is one line of the log with method, route, status, time and token name. */
static void
test_every_answer_logged_once(void **state)
{
    char *log;

    (void)state;
    assert_int_equal(call("GET", "/no-such-thing", reader, NULL, NULL), 404);
    assert_int_equal(call("GET", "/whoami", NULL, NULL, NULL), 401);
    assert_int_equal(call("GET", "/tasks/sat_unknown0000000000000", reader, NULL, NULL), 404);
    assert_true(wait_until(three_logged, NULL, 10000));
    log = proc_read_file(api.err_path);
    assert_non_null(log);
    assert_non_null(strstr(log, "method=GET route=/v1/no-such-thing status=404 ms="));
    assert_non_null(strstr(log, "method=GET route=/v1/whoami status=401 ms="));
    assert_non_null(strstr(log, "route=/v1/tasks/{id} status=404"));
    assert_null(strstr(log, "sat_unknown0000000000000")); /* ids are not logged */
    free(log);
    assert_int_equal(proc_count_lines(api.err_path, "route=/v1/whoami status=401"), 1);
}

/* A webhook to a closed port: the producer sees "no HTTP answer" (one class for every failure
 * without an answer, issue 37.13), a reader only that delivery failed. */
static void
test_reader_sees_one_failure_class(void **state)
{
    struct sockaddr_in sin = {.sin_family = AF_INET};
    socklen_t len = sizeof(sin);
    int closed = socket(AF_INET, SOCK_STREAM, 0); /* bound, never listening: refused */
    char task[160], path[160], *text;
    json_t *doc = NULL;
    const char *id;

    (void)state;
    inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
    assert_int_equal(bind(closed, (struct sockaddr *)&sin, sizeof(sin)), 0);
    assert_int_equal(getsockname(closed, (struct sockaddr *)&sin, &len), 0);
    snprintf(task, sizeof(task), "{\"at\":\"+1s\",\"webhook\":\"http://127.0.0.1:%d/x\"}",
             ntohs(sin.sin_port));
    assert_int_equal(call("POST", "/tasks", producer, task, &doc), 201);
    id = json_string_value(json_object_get(doc, "id"));
    snprintf(path, sizeof(path), "/tasks/%s", id);
    assert_true(task_shows(id, "failed", 60000));
    json_decref(doc);
    assert_int_equal(call("GET", path, producer, NULL, &doc), 200);
    text = json_dumps(doc, 0);
    assert_non_null(strstr(text, "no HTTP answer"));
    free(text);
    json_decref(doc);
    assert_int_equal(call("GET", path, reader, NULL, &doc), 200);
    text = json_dumps(doc, 0);
    if (strstr(text, "no HTTP answer") || !strstr(text, "\"delivery failed\""))
        fail_msg("a reader sees: %s", text);
    free(text);
    json_decref(doc);
    close(closed);
}

/* A listing reads a bounded number of windows per page and says where to go on: a month from
 * 1970 was one request of 4,474 broker reads (267,840 with these 10 s windows). */
static void
test_task_list_reads_a_bounded_part(void **state)
{
    char path[256], cursor[128] = "";
    long now_s = (long)(test_now_ms() / 1000);
    json_t *doc = NULL;
    const char *id;
    char want[64];
    int found = 0, pages = 0;

    (void)state;
    assert_int_equal(call("GET", "/tasks?from=@0&to=@2678400", reader, NULL, &doc), 200);
    assert_true(json_is_string(json_object_get(doc, "next_cursor")));
    json_decref(doc);
    assert_int_equal(call("POST", "/tasks", producer,
                          "{\"at\":\"+2h\",\"webhook\":\"http://127.0.0.1:9/far\"}", &doc),
                     201);
    snprintf(want, sizeof(want), "%s", json_string_value(json_object_get(doc, "id")));
    json_decref(doc);
    while (!found && pages < 20) {
        size_t i;
        json_t *t;
        snprintf(path, sizeof(path), "/tasks?from=@%ld&to=@%ld%s%s", now_s, now_s + 3 * 3600,
                 cursor[0] ? "&cursor=" : "", cursor);
        assert_int_equal(call("GET", path, reader, NULL, &doc), 200);
        pages++;
        json_array_foreach(json_object_get(doc, "tasks"), i, t)
        {
            id = json_string_value(json_object_get(t, "id"));
            found |= !strcmp(id, want);
        }
        if (!json_is_string(json_object_get(doc, "next_cursor"))) {
            json_decref(doc);
            break;
        }
        snprintf(cursor, sizeof(cursor), "%s",
                 json_string_value(json_object_get(doc, "next_cursor")));
        json_decref(doc);
    }
    assert_true(found);
    assert_true(pages > 1); /* 720 windows: more than one page reads */
}

/* 1 if a request from 127.0.0.2 to *port is answered. */
static int
answered_from_2(void *arg)
{
    return rawhttp_status_from("127.0.0.2", *(int *)arg,
                               "GET /v1/whoami HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 2000) == 401;
}

/* One address holds 4 connections at most, and a head must be complete within 3 s however
 * slowly it trickles in; another address is served all along. */
static void
test_connections_per_client_and_head_deadline(void **state)
{
    struct proc tight = {0};
    int port = api_serve(&tight, "tight", "SENDAT_API_CLIENT_CONNECTIONS=4",
                         "SENDAT_API_REQUEST_TIMEOUT=3", NULL);
    const char *get = "GET /v1/whoami HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    int slow[SLOW], s;

    (void)state;
    for (int i = 0; i < SLOW; i++) {
        slow[i] = dial_from("127.0.0.2", port, 0);
        if (slow[i] >= 0 && send(slow[i], "GET /v1/whoami HTTP/1.1\r\n", 25, MSG_NOSIGNAL) < 0) {
            close(slow[i]);
            slow[i] = -1;
        }
    }
    s = dial_from("127.0.0.2", port, 0); /* a fifth from the same address: closed unanswered */
    assert_true(s < 0 || rawhttp_exchange(s, get, 2000) == -1);
    if (s >= 0)
        close(s);
    s = dial_from("127.0.0.3", port, 0); /* another address: answered */
    assert_int_equal(rawhttp_exchange(s, get, 5000), 401);
    close(s);
    assert_true(rawhttp_drip_until_closed(slow, SLOW, "X-Drip: 1\r\n",
                                          20000));          /* the idle timeout is 60 s */
    assert_true(wait_until(answered_from_2, &port, 10000)); /* its slots are free again */
    assert_true(proc_count_lines(tight.err_path, "event=api_request_timeout") > 0);
    proc_signal(&tight, SIGTERM);
    assert_int_equal(proc_wait(&tight, 30000), 0);
}

#define SPREAD_ADDRS 40
#define SPREAD_EACH 28 /* 1,120 in all, under each address's cap of 32, over the 1,024 */

/* Many addresses each under its cap holding idle connections past the server's 1,024: a new
 * client is still served at once (the oldest waiting connections make room), not after the
 * head deadline. */
static void
test_many_addresses_cannot_fill_the_api(void **state)
{
    static int spread[SPREAD_ADDRS * SPREAD_EACH];
    struct proc wide = {0};
    int port, answered = 0;

    (void)state;
    if (!dial_raise_fd_limit(SPREAD_ADDRS * SPREAD_EACH + 300))
        skip(); /* this machine allows too few descriptors to stage it */
    port = api_serve(&wide, "wide", NULL, NULL, NULL); /* inherits the descriptor limit */
    for (int i = 0; i < SPREAD_ADDRS * SPREAD_EACH; i++)
        assert_true((spread[i] = dial_spread("127.0.2", i, SPREAD_EACH, port)) >= 0);
    usleep(500000); /* the server takes them in */
    for (int i = 0; i < 3; i++)
        answered += rawhttp_status_from("127.0.0.3", port,
                                        "GET /v1/whoami HTTP/1.1\r\nHost: x\r\n\r\n", 3000) == 401;
    for (int i = 0; i < SPREAD_ADDRS * SPREAD_EACH; i++)
        close(spread[i]);
    proc_signal(&wide, SIGTERM);
    assert_int_equal(proc_wait(&wide, 30000), 0);
    assert_int_equal(answered, 3);
}

#define GREEDY_ADDRS 34
#define GREEDY_EACH 32 /* 1,088 in all, each address at its cap, over the 1,024 */

/* Issue 37.6: a reader's token trickling request bodies over 1,088 connections from 34
 * addresses (each at its cap) held them all: a body had no deadline and a connection reading
 * one was never made room with, so nobody else was answered. Now the token's share of
 * connections (SENDAT_API_TOKEN_CONNECTIONS) is all it gets, the rest answered 429 and
 * closed, another token is served at once, and a body trickled in is cut at its deadline. */
static void
test_slow_bodies_of_one_token_cannot_fill_the_api(void **state)
{
    static int greedy[GREEDY_ADDRS * GREEDY_EACH];
    struct proc slow = {0};
    int port, answered = 0, started = 0;

    (void)state;
    if (!dial_raise_fd_limit(GREEDY_ADDRS * GREEDY_EACH + 300))
        skip(); /* this machine allows too few descriptors to stage it */
    /* no rate: at the default 50 a second the same attack only takes 22 s to stage */
    port = api_serve(&slow, "slowbody", "SENDAT_API_REQUEST_TIMEOUT=3", "SENDAT_API_RATE=0", NULL);
    for (int i = 0; i < GREEDY_ADDRS * GREEDY_EACH; i++) { /* each in its body at once */
        assert_true((greedy[i] = dial_spread("127.0.3", i, GREEDY_EACH, port)) >= 0);
        started += rawhttp_start_slow_body(greedy[i], reader);
        usleep(1000); /* its head read before the next opens: the server makes no room */
    }
    assert_true(started > 1024);
    usleep(500000); /* the server takes them in */
    for (int i = 0; i < 3; i++) {
        char get[256];
        snprintf(get, sizeof(get),
                 "GET /v1/whoami HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n",
                 producer);
        answered += rawhttp_status_from("127.0.0.3", port, get, 3000) == 200;
    }
    assert_int_equal(answered, 3);
    assert_true(rawhttp_drip_until_closed(greedy, GREEDY_ADDRS * GREEDY_EACH, " ", 30000));
    assert_true(proc_count_lines(slow.err_path, "status=429") > 0);
    assert_true(proc_count_lines(slow.err_path, "event=api_body_timeout") > 0);
    proc_signal(&slow, SIGTERM);
    assert_int_equal(proc_wait(&slow, 30000), 0);
}

#define JUNK_LINES 100000 /* "x\n" each: 195 KiB, the most lines a batch may hold */
#define JUNK_BATCHES 8

/* AddressSanitizer's allocator keeps freed blocks in quarantine and ignores malloc_trim, so a
 * sanitizer build's resident memory says nothing of what serve gives back: the bound is
 * checked in the plain builds only. */
#if defined(__SANITIZE_ADDRESS__)
#define RSS_TELLS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RSS_TELLS 0
#endif
#endif
#ifndef RSS_TELLS
#define RSS_TELLS 1
#endif

/* Issue 37.7: a batch of junk lines cost the server ~570 times its size (195 KiB: ~110 MiB,
 * kept after the answer). Eight of them now leave its resident size under 64 MiB above
 * where it was, each still answers every line's refusal, and a line's result is still
 * corrected after its PubAck (the same task twice: the second already scheduled). */
static void
test_junk_batches_give_their_memory_back(void **state)
{
    struct proc junk = {0};
    int port = api_serve(&junk, "junk", NULL, NULL, NULL);
    char *body = malloc(JUNK_LINES * 2 + 1), url[128], auth[128];
    char line[160], twice[330];
    json_t *doc = NULL;
    long before, after, peak;

    (void)state;
    assert_non_null(body);
    for (int i = 0; i < JUNK_LINES; i++)
        memcpy(body + 2 * i, "x\n", 2);
    body[JUNK_LINES * 2] = '\0';
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/batches", port);
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s", producer);
    before = rawhttp_status_kib(&junk, "VmRSS:");
    assert_true(before > 0);
    for (int i = 0; i < JUNK_BATCHES; i++) {
        struct curl_slist *h = curl_slist_append(NULL, auth);
        CURL *c = curl_easy_init();
        FILE *sink = fopen("/dev/null", "w");
        long status = 0;
        curl_off_t got = 0;
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, sink);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)(120 * test_timeout_multiplier()));
        assert_int_equal(curl_easy_perform(c), CURLE_OK);
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        curl_easy_getinfo(c, CURLINFO_SIZE_DOWNLOAD_T, &got);
        assert_int_equal(status, 200);
        assert_true(got > (curl_off_t)JUNK_LINES * 40); /* a refusal with its message per line */
        curl_slist_free_all(h);
        curl_easy_cleanup(c);
        fclose(sink);
    }
    after = rawhttp_status_kib(&junk, "VmRSS:");
    peak = rawhttp_status_kib(&junk, "VmHWM:");
    print_message("junk batches: rss %ld -> %ld KiB, peak %ld KiB\n", before, after, peak);
    free(body);
    proc_signal(&junk, SIGTERM);
    assert_int_equal(proc_wait(&junk, 30000), 0);
    if (RSS_TELLS && after - before > 64 * 1024)
        fail_msg("%d junk batches grew the server by %ld KiB", JUNK_BATCHES, after - before);
    snprintf(line, sizeof(line),
             "{\"at\":\"@%lld\",\"webhook\":\"http://127.0.0.1:9/j\",\"id\":\"junk-twice\"}\n",
             (long long)(test_now_ms() / 1000 + 3600));
    snprintf(twice, sizeof(twice), "%s%s", line, line);
    assert_int_equal(call("POST", "/batches", producer, twice, &doc), 200); /* results redone */
    assert_int_equal(json_integer_value(json_object_get(doc, "scheduled")), 2);
    assert_true(json_is_true(
        json_object_get(json_array_get(json_object_get(doc, "results"), 1), "already_scheduled")));
    json_decref(doc);
}

static long
whoami_as(int port, const char *token, long *retry_after)
{
    char url[128], auth[128];
    struct curl_slist *h = NULL;
    struct curl_header *ra = NULL;
    long status = 0;
    CURL *c = curl_easy_init();
    FILE *sink = fopen("/dev/null", "w");

    snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/whoami", port);
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
    h = curl_slist_append(h, auth);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, sink);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
    assert_int_equal(curl_easy_perform(c), CURLE_OK);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (retry_after && curl_easy_header(c, "Retry-After", 0, CURLH_HEADER, -1, &ra) == CURLHE_OK)
        *retry_after = atol(ra->value);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    fclose(sink);
    return status;
}

/* SENDAT_API_RATE=1: a second request within the second is answered 429 with Retry-After,
 * for that token only, and the token is served again a moment later. */
static void
test_rate_per_token(void **state)
{
    struct proc tight = {0};
    int port = api_serve(&tight, "rated", "SENDAT_API_RATE=1", NULL, NULL);
    long retry = 0, limited = 0;

    (void)state;
    for (int i = 0; i < 50 && !limited; i++)
        limited += whoami_as(port, reader, &retry) == 429;
    assert_true(limited > 0);
    assert_true(retry >= 1);
    assert_int_equal(whoami_as(port, producer, NULL), 200); /* another token: its own rate */
    assert_true(wait_until_ms(test_now_ms() + 1500, 10000));
    assert_int_equal(whoami_as(port, reader, NULL), 200);
    proc_signal(&tight, SIGTERM);
    assert_int_equal(proc_wait(&tight, 30000), 0);
}

/* GET /v1/openapi.json over TLS at the versions of sslversion: the curl code. */
static CURLcode
tls_at(int port, const char *cert, long sslversion, int *hsts)
{
    return tls_get(port, "/v1/openapi.json", cert, sslversion, NULL, hsts);
}

/* TLS 1.0 and 1.1 are refused by default (SENDAT_API_TLS_PRIORITIES=NORMAL still lets this
 * client use 1.1, so the refusal is the server's); 1.2 is served, with HSTS. */
static void
test_tls_12_at_least_and_hsts(void **state)
{
    struct tls_pair tls;
    struct proc https = {0}, old = {0};
    int port, hsts = 0;

    (void)state;
    assert_int_equal(tls_pair_make(&tls, F.dir, "hostile"), 0);
    port =
        api_serve(&old, "tls-old", tls.cert_env, tls.key_env, "SENDAT_API_TLS_PRIORITIES=NORMAL");
    assert_int_equal(
        tls_at(port, tls.cert, CURL_SSLVERSION_TLSv1_1 | CURL_SSLVERSION_MAX_TLSv1_1, &hsts),
        CURLE_OK); /* the client can speak 1.1 */
    proc_signal(&old, SIGTERM);
    assert_int_equal(proc_wait(&old, 30000), 0);
    port = api_serve(&https, "tls", tls.cert_env, tls.key_env, NULL);
    assert_int_not_equal(
        tls_at(port, tls.cert, CURL_SSLVERSION_TLSv1_1 | CURL_SSLVERSION_MAX_TLSv1_1, &hsts),
        CURLE_OK);
    assert_int_not_equal(
        tls_at(port, tls.cert, CURL_SSLVERSION_TLSv1 | CURL_SSLVERSION_MAX_TLSv1_0, &hsts),
        CURLE_OK);
    hsts = 0;
    assert_int_equal(
        tls_at(port, tls.cert, CURL_SSLVERSION_TLSv1_2 | CURL_SSLVERSION_MAX_DEFAULT, &hsts),
        CURLE_OK);
    assert_true(hsts);
    proc_signal(&https, SIGTERM);
    assert_int_equal(proc_wait(&https, 30000), 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_token_and_size_checked_before_the_body),
        cmocka_unit_test(test_batch_read_line_by_line),
        cmocka_unit_test(test_every_answer_logged_once),
        cmocka_unit_test(test_reader_sees_one_failure_class),
        cmocka_unit_test(test_task_list_reads_a_bounded_part),
        cmocka_unit_test(test_connections_per_client_and_head_deadline),
        cmocka_unit_test(test_many_addresses_cannot_fill_the_api),
        cmocka_unit_test(test_rate_per_token),
        cmocka_unit_test(test_slow_bodies_of_one_token_cannot_fill_the_api),
        cmocka_unit_test(test_junk_batches_give_their_memory_back),
        cmocka_unit_test(test_tls_12_at_least_and_hsts),
    };
    return fx_run(tests, sizeof(tests) / sizeof(tests[0]), api_setup, api_teardown);
}
