/* Reading a series record of the sendat_series bucket (JSON; series.c in book/ writes it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "series_record.h"

enum sa_code
series_record_read(struct sa_nats *n, const char *id, json_t **o, uint64_t *rev, struct sa_err *err)
{
    kvEntry *e = NULL;
    natsStatus s = kvStore_Get(&e, n->series, id);

    *o = NULL;
    if (s == NATS_NOT_FOUND)
        return sa_fail(err, SA_ENOTFOUND, "no series %s", id);
    if (s != NATS_OK)
        return sa_nats_fail(err, s, 0, "read series");
    *o = json_loadb(kvEntry_Value(e), (size_t)kvEntry_ValueLen(e), 0, NULL);
    *rev = kvEntry_Revision(e);
    kvEntry_Destroy(e);
    if (!json_is_object(*o)) {
        json_decref(*o);
        *o = NULL;
        return sa_fail(err, SA_EINVAL, "series record %s is damaged", id);
    }
    return SA_OK;
}

/* The record's pause log, {"pauses": [{"at": ms, "paused": true|false}, ...]}, oldest first. */
static void
read_pauses(json_t *o, struct series_info *out)
{
    json_t *list = json_object_get(o, "pauses"), *c;
    size_t i;

    json_array_foreach(list, i, c)
    {
        if (out->n_pauses == SERIES_PAUSES_MAX)
            break;
        out->pauses[out->n_pauses].at_ms = json_integer_value(json_object_get(c, "at"));
        out->pauses[out->n_pauses].paused = json_is_true(json_object_get(c, "paused"));
        out->n_pauses++;
    }
}

enum sa_code
series_get(struct sa_nats *n, const char *id, struct series_info *out, struct sa_err *err)
{
    json_t *o = NULL;
    uint64_t rev = 0;
    const char *cron = "", *tz = "";
    json_int_t until = 0, first = 0, created = 0;
    int count = 0;
    enum sa_code rc = series_record_read(n, id, &o, &rev, err);

    memset(out, 0, sizeof(*out));
    if (rc != SA_OK)
        return rc;
    if (json_unpack(o, "{s:s, s:s, s?I, s?i, s?I, s?I}", "cron", &cron, "tz", &tz, "until", &until,
                    "count", &count, "first", &first, "created", &created) != 0) {
        json_decref(o);
        return sa_fail(err, SA_EINVAL, "series record %s is damaged", id);
    }
    snprintf(out->cron, sizeof(out->cron), "%s", cron);
    snprintf(out->tz, sizeof(out->tz), "%s", tz);
    out->until_ms = until;
    out->count = count;
    out->first_ms = first;
    out->created_ms = created;
    read_pauses(o, out);
    json_decref(o);
    return SA_OK;
}
