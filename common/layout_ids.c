/* Task ids, series and occurrence ids, and the Msg-Ids of a task's re-publishes (layout.h):
 * an id sendat makes carries its due time, and every re-publish of one stored message gets the
 * same Msg-Id (invariant 2: no forks). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "layout.h"
#include "layout_text.h"
#include "random.h"

int
sa_layout_id_valid(const char *id)
{
    size_t n = 0;

    for (; id[n]; n++) {
        char c = id[n];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_'))
            return 0;
        if (n >= SA_ID_MAX)
            return 0;
    }
    return n > 0;
}

void
sa_layout_id_new(char *out, size_t cap, int64_t due_ms)
{
    static const char b32[] = "abcdefghijkmnpqrstuvwxyz23456789";
    unsigned char bytes[10];
    char digits[SA_I64_TEXT], rnd[12];

    sa_random_buf(bytes, sizeof(bytes)); /* one draw; 32 divides 256, so & 31 is uniform */
    rnd[0] = '-';
    for (int i = 0; i < 10; i++)
        rnd[i + 1] = b32[bytes[i] & 31];
    rnd[11] = '\0';
    sa_layout_i64(digits, due_ms);
    snprintf(out, cap, "%s%s", digits, rnd);
}

int64_t
sa_layout_id_due(const char *id)
{
    const char *dash = strchr(id, '-');
    int64_t v;

    if (!dash || sa_layout_digits(id, (size_t)(dash - id), &v) != 0 || strlen(dash + 1) != 10)
        return 0;
    return v;
}

void
sa_layout_series_new(char *out, size_t cap)
{
    char id[SA_ID_MAX + 1];

    sa_layout_id_new(id, sizeof(id), 0); /* "0-<10 random>" */
    snprintf(out, cap, "%s", strchr(id, '-') + 1);
}

int
sa_layout_occurrence_id(char *out, size_t cap, const char *series, int64_t occ_ms)
{
    return sa_layout_fit(snprintf(out, cap, "%" PRId64 "-%s", occ_ms, series), cap);
}

int64_t
sa_layout_occurrence_ms(const char *id)
{
    const char *dash = strchr(id, '-');
    int64_t v;

    if (!dash || sa_layout_digits(id, (size_t)(dash - id), &v) != 0 || !dash[1])
        return 0;
    return v;
}

static int
msgid(char *out, size_t cap, char kind, const char *id, uint64_t seq)
{
    return sa_layout_fit(snprintf(out, cap, "%c:%s:%" PRIu64, kind, id, seq), cap);
}

int
sa_layout_move_msgid(char *out, size_t cap, const char *id, uint64_t seq)
{
    return msgid(out, cap, 'm', id, seq);
}

int
sa_layout_retry_msgid(char *out, size_t cap, const char *id, uint64_t seq)
{
    return msgid(out, cap, 'r', id, seq);
}

int
sa_layout_dead_msgid(char *out, size_t cap, const char *id, uint64_t seq)
{
    return msgid(out, cap, 'd', id, seq);
}

int
sa_layout_replay_msgid(char *out, size_t cap, const char *id, uint64_t seq)
{
    return msgid(out, cap, 'p', id, seq);
}

int
sa_layout_park_msgid(char *out, size_t cap, const char *id, uint64_t seq)
{
    return msgid(out, cap, 'k', id, seq);
}
