/* The client side of the `sendat serve` tests (api_client.c), shared by test_api*.c. */
#ifndef API_CLIENT_H
#define API_CLIENT_H

#include <jansson.h>

#include "fixture.h"

extern struct fx F;
extern struct proc api;
extern char base[64];                            /* "http://127.0.0.1:PORT/v1" */
extern char reader[64], producer[64], admin[64]; /* a token of each role */

/* One request; token and body may be NULL. The answer's JSON is parsed into *doc (doc NULL:
 * not parsed). Returns the HTTP status. */
long call(const char *method, const char *path, const char *token, const char *body, json_t **doc);
/* The file every JSON answer of call() is appended to, one {"method","path","status","body"}
 * a line (tests/openapi/check_responses.py reads it). */
const char *api_answers_path(void);
/* A new token of role (`sendat token create`) into out. */
void make_token(const char *role, char *out, size_t cap);
/* Checks doc (taken) has the one error shape with status and, if given, field. */
void check_error(json_t *doc, long status, const char *field);

/* Whether doc's "events" (a task's or series' history) hold one called name. */
int has_event(json_t *doc, const char *name);
/* 1 once GET /tasks/<id> (as a reader) shows the event called name, 0 after timeout_ms: an
 * outcome is written after the receiver's answer, so a test that saw the request waits. */
int task_shows(const char *id, const char *name, int64_t timeout_ms);

/* Starts another `sendat serve` as name on a free port of 127.0.0.1 with the group's tokens and
 * up to three more settings ("K=V", each may be NULL: a NULL ends the list), and waits until
 * it listens. Returns its port; the caller stops p. */
int api_serve(struct proc *p, const char *name, const char *e1, const char *e2, const char *e3);
/* The port a `sendat serve` logged as listening on (its event=api_listening line), or 0. */
int api_port_in_log(const struct proc *p);

/* Books body (JSON) as the producer, failing the test unless answered 201; the id into id. */
void book(const char *body, char *id, size_t cap);
/* Follows the pages of first (a path with a query) by their next_cursor: the ids of the
 * items under key joined with ' ', each item checked by check (NULL: none), into out. */
void all_pages(const char *first, const char *key, void (*check)(json_t *item), char *out,
               size_t cap);
/* The last test of a test_api* program: GET /v1/openapi.json needs no token and is
 * docs/openapi.yaml (as producer/openapi.json), and every JSON answer the program got is as
 * that document says (tests/openapi/check_responses.py; skipped without its Python modules). */
void test_openapi_served_and_answers_match(void **state);

/* cmocka group setup and teardown: the fleet, the tokens, `sendat serve` on a free port. */
int api_setup(void **state);
int api_teardown(void **state);

#endif
