/* See seqset.h. Load stays at most one half, so probe runs stay short. */
#include <stdlib.h>

#include "seqset.h"

static size_t
home(const struct seqset *s, uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & (s->cap - 1);
}

static void
place(struct seqset *s, struct seqset_entry e)
{
    size_t i = home(s, e.key);

    while (s->slot[i].key)
        i = (i + 1) & (s->cap - 1);
    s->slot[i] = e;
    s->len++;
}

static int
grow(struct seqset *s)
{
    struct seqset n = {0};

    n.cap = s->cap ? s->cap * 2 : 1024;
    n.slot = calloc(n.cap, sizeof(*n.slot));
    if (!n.slot)
        return -1;
    for (size_t i = 0; i < s->cap; i++)
        if (s->slot[i].key)
            place(&n, s->slot[i]);
    free(s->slot);
    *s = n;
    return 0;
}

static long
find(const struct seqset *s, uint64_t key)
{
    if (!s->cap)
        return -1;
    for (size_t i = home(s, key); s->slot[i].key; i = (i + 1) & (s->cap - 1))
        if (s->slot[i].key == key)
            return (long)i;
    return -1;
}

enum seqset_put
seqset_put(struct seqset *s, uint64_t key, void *val)
{
    struct seqset_entry e = {key, val};

    if (!key || find(s, key) >= 0)
        return SEQSET_PRESENT;
    if ((s->len + 1) * 2 > s->cap && grow(s) != 0)
        return SEQSET_NOMEM;
    place(s, e);
    return SEQSET_ADDED;
}

enum seqset_put
seqset_add(struct seqset *s, uint64_t key)
{
    return seqset_put(s, key, NULL);
}

void *
seqset_get(const struct seqset *s, uint64_t key)
{
    long at = find(s, key);

    return at < 0 ? NULL : s->slot[at].val;
}

/* Backward-shift deletion: every later entry of the run that may move into the hole does. */
void *
seqset_take(struct seqset *s, uint64_t key)
{
    long at = find(s, key);
    size_t hole, i, mask = s->cap - 1;
    void *val;

    if (at < 0)
        return NULL;
    hole = (size_t)at;
    val = s->slot[hole].val;
    s->slot[hole].key = 0;
    s->len--;
    for (i = (hole + 1) & mask; s->slot[i].key; i = (i + 1) & mask) {
        size_t h = home(s, s->slot[i].key);
        /* the entry at i may fill the hole unless its home lies cyclically in (hole, i] */
        if (((i - h) & mask) >= ((i - hole) & mask)) {
            s->slot[hole] = s->slot[i];
            s->slot[i].key = 0;
            hole = i;
        }
    }
    return val;
}

void
seqset_remove(struct seqset *s, uint64_t key)
{
    (void)seqset_take(s, key);
}

void
seqset_free(struct seqset *s)
{
    free(s->slot);
    s->slot = NULL;
    s->cap = s->len = 0;
}
