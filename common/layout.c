/* The subject layout of the timing wheel. Every name a process derives from a due time or a
 * task id is computed here, so producers and consumers can never disagree on where a task
 * sits (the ids themselves and the Msg-Ids of re-publishes: layout_ids.c). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "layout_text.h"

void
sa_layout_defaults(struct sa_layout *l)
{
    l->window_ms = 600000;
    l->slot_ms = 10000;
    l->ack_wait_ms = 30000;
    l->lead_ms = 2000;
    l->shards = 1;
}

int
sa_layout_equal(const struct sa_layout *a, const struct sa_layout *b)
{
    return a->window_ms == b->window_ms && a->slot_ms == b->slot_ms &&
           a->ack_wait_ms == b->ack_wait_ms && a->lead_ms == b->lead_ms && a->shards == b->shards;
}

enum sa_code
sa_layout_check(const struct sa_layout *l, struct sa_err *err)
{
    if (l->slot_ms < 100 || l->window_ms < l->slot_ms || l->window_ms % l->slot_ms != 0)
        return sa_fail(err, SA_EINVAL,
                       "slot_ms %" PRId64 " must be >= 100 and divide window_ms %" PRId64,
                       l->slot_ms, l->window_ms);
    if (l->lead_ms < 0 || l->lead_ms >= l->slot_ms)
        return sa_fail(err, SA_EINVAL, "lead_ms %" PRId64 " must be below slot_ms", l->lead_ms);
    if (l->shards < 1 || l->shards > SA_SHARDS_MAX)
        return sa_fail(err, SA_EINVAL, "shards %d must be 1..%d", l->shards, SA_SHARDS_MAX);
    if (l->ack_wait_ms < l->slot_ms + l->lead_ms + 1000)
        return sa_fail(err, SA_EINVAL,
                       "ack_wait_ms %" PRId64 " must exceed slot_ms + lead_ms + 1 s",
                       l->ack_wait_ms);
    return SA_OK;
}

/* One shard is written as before shards existed. More are written first, where a binary
 * from before shards looks for "window_ms=": it refuses the record instead of running as a
 * single shard beside the others (claims in another bucket: a task sent twice). */
int
sa_layout_format(char *out, size_t cap, const struct sa_layout *l)
{
    char shards[24] = "";

    if (l->shards > 1)
        snprintf(shards, sizeof(shards), "shards=%d ", l->shards);
    return snprintf(out, cap,
                    "%swindow_ms=%" PRId64 " slot_ms=%" PRId64 " ack_wait_ms=%" PRId64
                    " lead_ms=%" PRId64,
                    shards, l->window_ms, l->slot_ms, l->ack_wait_ms, l->lead_ms);
}

/* "shards=N " at the start of text: N into *shards and the rest after it; 1 and text itself
 * without one; NULL if N is not 1..SA_SHARDS_MAX. */
static const char *
shards_prefix(const char *text, int *shards)
{
    char *end = NULL;
    long v;

    *shards = 1;
    if (strncmp(text, "shards=", 7) != 0)
        return text;
    v = strtol(text + 7, &end, 10);
    if (end == text + 7 || *end != ' ' || text[7] < '0' || text[7] > '9' || v < 1 ||
        v > SA_SHARDS_MAX)
        return NULL;
    *shards = (int)v;
    return end + 1;
}

enum sa_code
sa_layout_parse(struct sa_layout *l, const char *text, struct sa_err *err)
{
    long long w, s, a, ld;
    int used = 0, shards;
    const char *rest = shards_prefix(text, &shards);

    if (!rest ||
        sscanf(rest, "window_ms=%lld slot_ms=%lld ack_wait_ms=%lld lead_ms=%lld%n", &w, &s, &a, &ld,
               &used) != 4 ||
        rest[used + strspn(rest + used, " \t\r\n")] != '\0')
        return sa_fail(err, SA_EINVAL, "layout record \"%.80s\" is not understood", text);
    l->window_ms = w;
    l->slot_ms = s;
    l->ack_wait_ms = a;
    l->lead_ms = ld;
    l->shards = shards;
    return sa_layout_check(l, err);
}

static int64_t
floor_to(int64_t t, int64_t unit)
{
    int64_t r = t % unit;

    return r < 0 ? t - r - unit : t - r;
}

int64_t
sa_layout_window(const struct sa_layout *l, int64_t t_ms)
{
    return floor_to(t_ms, l->window_ms);
}

int64_t
sa_layout_slot(const struct sa_layout *l, int64_t t_ms)
{
    return floor_to(t_ms, l->slot_ms);
}

int
sa_layout_shard_of(const struct sa_layout *l, const char *id)
{
    uint32_t h = 2166136261u;

    for (; *id; id++)
        h = (h ^ (uint8_t)*id) * 16777619u;
    return l->shards > 1 ? (int)(h % (uint32_t)l->shards) : 0;
}

int
sa_layout_stream(char *out, size_t cap, int shard)
{
    if (shard == 0)
        return sa_layout_fit(snprintf(out, cap, "%s", SA_TASKS_STREAM), cap);
    return sa_layout_fit(snprintf(out, cap, "%s_%d", SA_TASKS_STREAM, shard), cap);
}

int
sa_layout_claims_bucket(char *out, size_t cap, int shard)
{
    if (shard == 0)
        return sa_layout_fit(snprintf(out, cap, "%s", SA_CLAIMS_BUCKET), cap);
    return sa_layout_fit(snprintf(out, cap, "%s_%d", SA_CLAIMS_BUCKET, shard), cap);
}

int
sa_layout_meta_key(char *out, size_t cap, const char *base, int shard)
{
    if (shard == 0)
        return sa_layout_fit(snprintf(out, cap, "%s", base), cap);
    return sa_layout_fit(snprintf(out, cap, "%s.%d", base, shard), cap);
}

/* Every task subject of a shard is "<prefix>.<rest>"; the prefix is the only shard-specific
 * part. */
static int
shard_subject(char *out, size_t cap, int shard, const char *rest)
{
    if (shard == 0)
        return sa_layout_fit(snprintf(out, cap, "sendat.task.%s", rest), cap);
    return sa_layout_fit(snprintf(out, cap, "sendat.shard.%d.%s", shard, rest), cap);
}

/* Text written into out as snprintf would write it (cut at cap - 1, always ended, len the
 * whole length), without its format parsing: the producer writes a task's subject and id
 * for every task it books (docs/design-notes.md, "Producer CPU per task on a faster
 * server"). */
struct put {
    char *out;
    size_t cap, len;
};

static void
put_mem(struct put *b, const char *s, size_t n)
{
    if (b->len + 1 < b->cap) {
        size_t room = b->cap - 1 - b->len;
        memcpy(b->out + b->len, s, n < room ? n : room);
    }
    b->len += n;
    if (b->cap)
        b->out[b->len < b->cap ? b->len : b->cap - 1] = '\0';
}

static void
put_str(struct put *b, const char *s)
{
    put_mem(b, s, strlen(s));
}

static void
put_i64(struct put *b, int64_t v)
{
    char digits[SA_I64_TEXT];

    put_mem(b, digits, sa_layout_i64(digits, v));
}

/* "<prefix>.<window>.<level>.<id>", level "w" or the slot's start (shard_subject's prefix). */
static int
task_subject(char *out, size_t cap, int shard, int64_t window, int64_t slot, const char *id)
{
    struct put b = {out, cap, 0};

    if (shard == 0) {
        put_mem(&b, "sendat.task.", 12);
    } else {
        put_mem(&b, "sendat.shard.", 13);
        put_i64(&b, shard);
        put_mem(&b, ".", 1);
    }
    put_i64(&b, window);
    if (slot) {
        put_mem(&b, ".", 1);
        put_i64(&b, slot);
        put_mem(&b, ".", 1);
    } else {
        put_mem(&b, ".w.", 3);
    }
    put_str(&b, id);
    return b.len < cap ? (int)b.len : -1;
}

int
sa_layout_stream_subjects(char *out, size_t cap, int shard)
{
    return shard_subject(out, cap, shard, "*.*.*");
}

int
sa_layout_window_subject(char *out, size_t cap, int shard, int64_t window, const char *id)
{
    return task_subject(out, cap, shard, window, 0, id);
}

int
sa_layout_slot_subject(char *out, size_t cap, int shard, int64_t window, int64_t slot,
                       const char *id)
{
    return task_subject(out, cap, shard, window, slot, id);
}

int
sa_layout_level_filter(char *out, size_t cap, int shard, int64_t window, int64_t slot)
{
    if (slot == 0)
        return sa_layout_window_subject(out, cap, shard, window, "*");
    return sa_layout_slot_subject(out, cap, shard, window, slot, "*");
}

int
sa_layout_window_all_filter(char *out, size_t cap, int shard, int64_t window)
{
    char rest[32];

    snprintf(rest, sizeof(rest), "%" PRId64 ".>", window);
    return shard_subject(out, cap, shard, rest);
}

int
sa_layout_id_filter(char *out, size_t cap, int shard, const char *id)
{
    char rest[SA_SUBJECT_MAX];

    if (sa_layout_fit(snprintf(rest, sizeof(rest), "*.*.%s", id), sizeof(rest)) < 0)
        return -1;
    return shard_subject(out, cap, shard, rest);
}

int
sa_layout_durable(char *out, size_t cap, int64_t window, int64_t slot)
{
    if (slot == 0)
        return sa_layout_fit(snprintf(out, cap, "w%" PRId64, window), cap);
    return sa_layout_fit(snprintf(out, cap, "s%" PRId64, slot), cap);
}

/* The shard a task subject's prefix names and where the rest begins: "sendat.task." is shard
 * 0, "sendat.shard.<k>." (k written as sa_layout_stream writes it, 1..SA_SHARDS_MAX-1) shard
 * k. NULL if the subject has neither. */
static const char *
split_prefix(const char *subject, int *shard)
{
    static const char task[] = "sendat.task.", sharded[] = "sendat.shard.";
    const char *k, *dot;
    int64_t v;

    if (!strncmp(subject, task, sizeof(task) - 1)) {
        *shard = 0;
        return subject + sizeof(task) - 1;
    }
    if (strncmp(subject, sharded, sizeof(sharded) - 1) != 0)
        return NULL;
    k = subject + sizeof(sharded) - 1;
    dot = strchr(k, '.');
    if (!dot || dot - k > 2 || sa_layout_digits(k, (size_t)(dot - k), &v) != 0 || v < 1 ||
        v >= SA_SHARDS_MAX || k[0] == '0')
        return NULL;
    *shard = (int)v;
    return dot + 1;
}

/* Splits <prefix>.<window>.<level>.<id> at its dots; -1 if it is not shaped so. */
static int
split_subject(const char *subject, int *shard, const char **w, const char **lvl, const char **id)
{
    *w = split_prefix(subject, shard);
    if (!*w)
        return -1;
    *lvl = strchr(*w, '.');
    *id = *lvl ? strchr(*lvl + 1, '.') : NULL;
    if (!*id)
        return -1;
    (*lvl)++;
    (*id)++;
    return 0;
}

enum sa_code
sa_layout_parse_subject(struct sa_place *p, const char *subject, struct sa_err *err)
{
    const char *w, *lvl, *id;

    if (split_subject(subject, &p->shard, &w, &lvl, &id) != 0)
        return sa_fail(err, SA_EINVAL, "subject %.100s is not a task subject", subject);
    if (sa_layout_digits(w, (size_t)(lvl - 1 - w), &p->window) != 0)
        return sa_fail(err, SA_EINVAL, "subject %.100s has no window", subject);
    if (id - lvl == 2 && *lvl == 'w')
        p->slot = 0;
    else if (sa_layout_digits(lvl, (size_t)(id - 1 - lvl), &p->slot) != 0)
        return sa_fail(err, SA_EINVAL, "subject %.100s has no level", subject);
    if (!sa_layout_id_valid(id))
        return sa_fail(err, SA_EINVAL, "subject %.100s has no valid task id", subject);
    memcpy(p->id, id, strlen(id) + 1);
    return SA_OK;
}

/* A number as this layout writes it: digits only, no leading zero (a durable's filter is
 * built from the number, so "0600000" is never matched by the filter of window 600000). */
static int
canonical_ms(const char *s, size_t n, int64_t *out)
{
    char buf[24];
    struct put b = {buf, sizeof(buf), 0};

    if (sa_layout_digits(s, n, out) != 0)
        return -1;
    put_i64(&b, *out);
    return b.len == n ? 0 : -1;
}

enum sa_code
sa_layout_level_of(const struct sa_layout *l, const char *subject, int64_t *window, int64_t *slot,
                   struct sa_err *err)
{
    const char *w, *lvl, *id;
    int shard;

    if (split_subject(subject, &shard, &w, &lvl, &id) != 0)
        return sa_fail(err, SA_EINVAL, "not shaped sendat.task.<window>.<level>.<id>");
    if (shard >= l->shards)
        return sa_fail(err, SA_EINVAL, "shard %d is not one of this layout's %d", shard, l->shards);
    if (canonical_ms(w, (size_t)(lvl - 1 - w), window) != 0)
        return sa_fail(err, SA_EINVAL, "the window is not a time in ms");
    if (*window % l->window_ms != 0)
        return sa_fail(err, SA_EINVAL, "window %" PRId64 " is not a multiple of window_ms %" PRId64,
                       *window, l->window_ms);
    if (id - lvl == 2 && *lvl == 'w') {
        *slot = 0;
        return SA_OK;
    }
    if (canonical_ms(lvl, (size_t)(id - 1 - lvl), slot) != 0)
        return sa_fail(err, SA_EINVAL, "the level is neither w nor a slot start");
    if (*slot <= 0 || *slot % l->slot_ms != 0 || *slot < *window || *slot >= *window + l->window_ms)
        return sa_fail(err, SA_EINVAL,
                       "slot %" PRId64 " is not a slot start inside window %" PRId64, *slot,
                       *window);
    return SA_OK;
}

int
sa_layout_park_subject(char *out, size_t cap, int shard, const char *id)
{
    char rest[SA_SUBJECT_MAX];

    if (sa_layout_fit(snprintf(rest, sizeof(rest), "park.k.%s", id), sizeof(rest)) < 0)
        return -1;
    return shard_subject(out, cap, shard, rest);
}

int
sa_layout_park_filter(char *out, size_t cap, int shard)
{
    return shard_subject(out, cap, shard, "park.k.*");
}

int
sa_layout_is_park(const char *subject, char *id)
{
    static const char park[] = "park.k.";
    int shard;
    const char *rest = split_prefix(subject, &shard);

    if (!rest || strncmp(rest, park, sizeof(park) - 1) != 0 ||
        !sa_layout_id_valid(rest + sizeof(park) - 1))
        return 0;
    if (id)
        memcpy(id, rest + sizeof(park) - 1, strlen(rest + sizeof(park) - 1) + 1);
    return 1;
}

int64_t
sa_layout_book_slot(const struct sa_layout *l, int64_t due_ms, int64_t now_ms)
{
    int64_t slot = sa_layout_slot(l, due_ms);

    /* The fleet takes a slot up lead_ms before it starts and drops it once it is over and
     * drained; one more slot_ms covers a producer's clock behind the fleet's and a publish
     * that is slow to land. For a slot that starts sooner the window level is safe: it is
     * pulled while current and holds or moves what it finds. */
    return slot >= now_ms + l->lead_ms + l->slot_ms ? slot : 0;
}
