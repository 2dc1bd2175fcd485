/* See seqset.h. Load stays at most one half, so probe runs stay short. */
#include <stdlib.h>

#include "seqset.h"

static size_t
home(const struct seqset *s, uint64_t seq)
{
    return (size_t)((seq * 0x9E3779B97F4A7C15ull) >> 17) & (s->cap - 1);
}

static void
put(struct seqset *s, uint64_t seq)
{
    size_t i = home(s, seq);

    while (s->slot[i])
        i = (i + 1) & (s->cap - 1);
    s->slot[i] = seq;
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
        if (s->slot[i])
            put(&n, s->slot[i]);
    free(s->slot);
    *s = n;
    return 0;
}

static long
find(const struct seqset *s, uint64_t seq)
{
    if (!s->cap)
        return -1;
    for (size_t i = home(s, seq); s->slot[i]; i = (i + 1) & (s->cap - 1))
        if (s->slot[i] == seq)
            return (long)i;
    return -1;
}

int
seqset_add(struct seqset *s, uint64_t seq)
{
    if (find(s, seq) >= 0)
        return 0;
    if ((s->len + 1) * 2 > s->cap && grow(s) != 0)
        return -1;
    put(s, seq);
    return 1;
}

/* Backward-shift deletion: every later entry of the run that may move into the hole does. */
void
seqset_remove(struct seqset *s, uint64_t seq)
{
    long at = find(s, seq);
    size_t hole, i, mask = s->cap - 1;

    if (at < 0)
        return;
    hole = (size_t)at;
    s->slot[hole] = 0;
    s->len--;
    for (i = (hole + 1) & mask; s->slot[i]; i = (i + 1) & mask) {
        size_t h = home(s, s->slot[i]);
        /* the entry at i may fill the hole unless its home lies cyclically in (hole, i] */
        if (((i - h) & mask) >= ((i - hole) & mask)) {
            s->slot[hole] = s->slot[i];
            s->slot[i] = 0;
            hole = i;
        }
    }
}

void
seqset_free(struct seqset *s)
{
    free(s->slot);
    s->slot = NULL;
    s->cap = s->len = 0;
}
