/* Stopping a series (cancel) and pausing or resuming it: writes to the cancel map and the
 * series record, after reading its state (series_status.h). */
#include <stdio.h>
#include <string.h>

#include "claim.h"
#include "cancelrec.h"
#include "claimmac.h"
#include "series.h"
#include "series_status.h"
#include "series_stop.h"
#include "timeparse.h"

enum sa_code
series_cancel(struct sa_nats *n, const char *id, struct cancel_result *out, struct sa_err *err)
{
    char now[40], value[40 + SA_CLAIMMAC_MAX + 2];
    uint64_t rev;
    enum sa_code rc = series_finished(n, id, &out->at_ms, err);

    if (rc == SA_ENOTFOUND) {
        sa_err_clear(err);
        out->outcome = CANCEL_UNKNOWN;
        return SA_OK;
    }
    if (rc != SA_OK)
        return rc;
    if (out->at_ms != 0) {
        out->outcome = CANCEL_SERIES_FINISHED;
        return SA_OK;
    }
    out->at_ms = sa_now_ms();
    sa_time_format(now, sizeof(now), out->at_ms);
    if (sa_cancelrec_make(value, sizeof(value), id, now) < 0)
        return sa_fail(err, SA_ECRYPTO, "no key to authenticate the cancel of %s", id);
    if (kvStore_PutString(&rev, n->cancel, id, value) != NATS_OK)
        return sa_fail(err, SA_ENATS, "the cancel map did not take %s", id);
    out->outcome = CANCEL_DONE;
    return SA_OK;
}

/* Writes the series' pause key in the cancel map: a pause record, or a lift (cancelrec.h)
 * followed by a DEL, which consumers of older versions read as the resume. A DEL alone lifts
 * nothing: anyone allowed to write the bucket can make one. */
static enum sa_code
set_paused(struct sa_nats *n, const char *id, int pause, struct sa_err *err)
{
    char key[SA_ID_MAX + 8], now[48], value[48 + SA_CLAIMMAC_MAX + 2];
    uint64_t rev;
    natsStatus s;

    snprintf(key, sizeof(key), "%s%s", SA_PAUSE_PREFIX, id);
    snprintf(now, sizeof(now), "%s", pause ? "" : SA_CANCELREC_LIFT);
    sa_time_format(now + strlen(now), sizeof(now) - strlen(now), sa_now_ms());
    if (sa_cancelrec_make(value, sizeof(value), key, now) < 0)
        return sa_fail(err, SA_ECRYPTO, "no key to authenticate the %s of %s",
                       pause ? "pause" : "resume", id);
    s = kvStore_PutString(&rev, n->cancel, key, value);
    if (s == NATS_OK && !pause)
        s = kvStore_Delete(n->cancel, key);
    if (s != NATS_OK)
        return sa_nats_fail(err, s, 0, pause ? "pause series" : "resume series");
    return SA_OK;
}

enum sa_code
series_pause(struct sa_nats *n, const char *id, int pause, struct pause_result *out,
             struct sa_err *err)
{
    int64_t finished = 0;
    enum sa_code rc = series_finished(n, id, &finished, err);

    memset(out, 0, sizeof(*out));
    if (rc == SA_ENOTFOUND) {
        sa_err_clear(err);
        out->outcome = PAUSE_UNKNOWN;
        return SA_OK;
    }
    if (rc != SA_OK)
        return rc;
    if ((out->at_ms = series_cancelled_at(n, id)) != 0) {
        out->outcome = PAUSE_CANCELLED;
        return SA_OK;
    }
    if ((out->at_ms = finished) != 0) {
        out->outcome = PAUSE_FINISHED;
        return SA_OK;
    }
    out->outcome = PAUSE_DONE;
    out->at_ms = sa_now_ms();
    rc = set_paused(n, id, pause, err);
    /* the cancel map holds the pause while it lasts; the record keeps every change for status */
    return rc == SA_OK ? series_note_pause(n, id, pause, out->at_ms, err) : rc;
}
