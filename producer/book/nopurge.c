/* Claims buckets without rollups (see nopurge.h). */
#include "natserr.h"
#include "nopurge.h"

enum sa_code
nopurge_settle(jsCtx *js, const char *stream, struct sa_err *err)
{
    jsStreamInfo *si = NULL, *up = NULL;
    jsErrCode jerr = 0;
    natsStatus s = js_GetStreamInfo(&si, js, stream, NULL, &jerr);

    if (s == NATS_OK && si->Config->AllowRollup) {
        si->Config->AllowRollup = false;
        s = js_UpdateStream(&up, js, si->Config, NULL, &jerr);
        jsStreamInfo_Destroy(up);
    }
    jsStreamInfo_Destroy(si);
    return s == NATS_OK ? SA_OK : sa_nats_fail(err, s, jerr, stream);
}
