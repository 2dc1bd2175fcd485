/* See easypool.h. */
#include <stdlib.h>

#include "easypool.h"

void
easypool_init(struct easypool *p, int cap)
{
    p->n = 0;
    p->spare = cap > 0 ? calloc((size_t)cap, sizeof(*p->spare)) : NULL;
    p->cap = p->spare ? cap : 0;
}

CURL *
easypool_take(struct easypool *p)
{
    return p->n ? p->spare[--p->n] : curl_easy_init();
}

void
easypool_give(struct easypool *p, CURL *e)
{
    if (!e)
        return;
    if (p->n == p->cap) {
        curl_easy_cleanup(e);
        return;
    }
    curl_easy_reset(e);
    p->spare[p->n++] = e;
}

void
easypool_free(struct easypool *p)
{
    while (p->n)
        curl_easy_cleanup(p->spare[--p->n]);
    free(p->spare);
    p->spare = NULL;
    p->cap = 0;
}
