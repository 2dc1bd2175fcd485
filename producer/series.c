/* Series records in the sendat_series bucket, as JSON. */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "series.h"

static int
encode(const struct sa_task *t, char *out, size_t cap)
{
    json_t *o = json_pack("{s:s, s:s, s:I, s:i, s:I, s:I}", "cron", t->cron, "tz", t->tz, "until",
                          (json_int_t)t->until_ms, "count", t->count, "first",
                          (json_int_t)t->due_ms, "created", (json_int_t)t->created_ms);
    size_t n = o ? json_dumpb(o, out, cap - 1, JSON_COMPACT) : 0;

    json_decref(o);
    if (n == 0 || n >= cap)
        return -1;
    out[n] = '\0';
    return (int)n;
}

enum sa_code
series_get(struct sa_nats *n, const char *id, struct series_info *out, struct sa_err *err)
{
    kvEntry *e = NULL;
    natsStatus s = kvStore_Get(&e, n->series, id);
    json_t *o;
    const char *cron = "", *tz = "";
    json_int_t until = 0, first = 0, created = 0;
    int count = 0;

    memset(out, 0, sizeof(*out));
    if (s == NATS_NOT_FOUND)
        return sa_fail(err, SA_ENOTFOUND, "no series %s", id);
    if (s != NATS_OK)
        return sa_nats_fail(err, s, 0, "read series");
    o = json_loadb(kvEntry_Value(e), (size_t)kvEntry_ValueLen(e), 0, NULL);
    kvEntry_Destroy(e);
    if (!o || json_unpack(o, "{s:s, s:s, s?I, s?i, s?I, s?I}", "cron", &cron, "tz", &tz, "until",
                          &until, "count", &count, "first", &first, "created", &created) != 0) {
        json_decref(o);
        return sa_fail(err, SA_EINVAL, "series record %s is damaged", id);
    }
    snprintf(out->cron, sizeof(out->cron), "%s", cron);
    snprintf(out->tz, sizeof(out->tz), "%s", tz);
    out->until_ms = until;
    out->count = count;
    out->first_ms = first;
    out->created_ms = created;
    json_decref(o);
    return SA_OK;
}

enum sa_code
series_register(struct sa_nats *n, const struct sa_task *t, struct sa_err *err)
{
    char buf[512];
    struct series_info old;
    uint64_t rev;
    enum sa_code rc;

    if (encode(t, buf, sizeof(buf)) < 0)
        return sa_fail(err, SA_EINVAL, "series %s does not encode", t->series_id);
    if (kvStore_CreateString(&rev, n->series, t->series_id, buf) == NATS_OK)
        return SA_OK;
    rc = series_get(n, t->series_id, &old, err);
    if (rc == SA_ENOTFOUND)
        return sa_fail(err, SA_ENATS, "series %s could not be recorded", t->series_id);
    if (rc != SA_OK)
        return rc;
    if (strcmp(old.cron, t->cron) || strcmp(old.tz, t->tz))
        return sa_fail(err, SA_EINVAL, "series %s exists with another schedule (%s in %s)",
                       t->series_id, old.cron, old.tz);
    return SA_EEXIST; /* scheduled already: the chain runs, publish nothing */
}
