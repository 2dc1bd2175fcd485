/* A batch's results, one per line in line order, kept as compact JSON text (issue 37.7): a
 * jansson object per line cost ~1.1 KiB, so 100,000 junk lines (a 195 KiB body) held
 * ~110 MiB; as text a line costs its answer's bytes and 24 more. */
#ifndef SERVE_RESULTS_H
#define SERVE_RESULTS_H

#include <stddef.h>

#include <jansson.h>

#include "sa_err.h"

#define SERVE_RESULT_TEXT_MAX 1024 /* one line's result; a longer one is cut to its status */

struct serve_results;

/* An empty set of results into *out; SA_ENOMEM. */
enum sa_code serve_results_new(struct serve_results **out, struct sa_err *err) SA_MUST_CHECK;
/* Frees rs (NULL allowed). */
void serve_results_free(struct serve_results *rs);

/* Appends line's result doc (taken; NULL or one too long to keep is stored as a refusal with
 * its status only), lines in rising order. SA_ENOMEM. */
enum sa_code serve_results_add(struct serve_results *rs, long line, json_t *doc,
                               struct sa_err *err) SA_MUST_CHECK;
/* Puts doc (taken) in place of line's result, as serve_results_add stores it; nothing if the
 * line has none. */
void serve_results_set(struct serve_results *rs, long line, json_t *doc);
/* line's result as a new document (the caller decrefs it), or NULL. */
json_t *serve_results_get(const struct serve_results *rs, long line);

/* The bytes rs holds. */
size_t serve_results_bytes(const struct serve_results *rs);

/* The answer {"scheduled","refused","results":[...]} as one NUL-terminated text (the caller
 * frees it) and its length, or NULL if no memory. */
char *serve_results_answer(const struct serve_results *rs, size_t *len);

#endif
