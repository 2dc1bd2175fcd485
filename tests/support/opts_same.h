/* Whether two task options hold the same values (strings compared by content): the check that
 * batch_line_flat sets what jansson and batch_opts_from_json set, shared by
 * tests/unit/test_batch_json.c and tests/fuzz/fuzz_batch.c. Header only: neither links the
 * test support library. */
#ifndef OPTS_SAME_H
#define OPTS_SAME_H

#include <stddef.h>
#include <string.h>

#include "book_req.h"

static inline int
opts_str_same(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

static inline int
opts_same(const struct book_req *a, const struct book_req *b)
{
#define OPTS_STR(f) offsetof(struct book_req, f)
    static const size_t strs[] = {OPTS_STR(at),      OPTS_STR(not_after), OPTS_STR(webhook),
                                  OPTS_STR(data),    OPTS_STR(id),        OPTS_STR(group),
                                  OPTS_STR(subject), OPTS_STR(text),      OPTS_STR(html),
                                  OPTS_STR(from),    OPTS_STR(reply_to),  OPTS_STR(cron),
                                  OPTS_STR(tz),      OPTS_STR(until),     OPTS_STR(count)};
#undef OPTS_STR

    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
        if (!opts_str_same(*(const char *const *)((const char *)a + strs[i]),
                           *(const char *const *)((const char *)b + strs[i])))
            return 0;
    if (a->at_most_once != b->at_most_once || a->n_headers != b->n_headers)
        return 0;
    for (int i = 0; i < a->n_headers; i++)
        if (!opts_str_same(a->headers[i], b->headers[i]))
            return 0;
    for (int k = 0; k < 3; k++) {
        if (a->n_rcpt[k] != b->n_rcpt[k])
            return 0;
        for (int i = 0; i < a->n_rcpt[k]; i++)
            if (!opts_str_same(a->rcpt[k][i], b->rcpt[k][i]))
                return 0;
    }
    return 1;
}

#endif
