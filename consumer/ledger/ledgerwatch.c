/* The claims buckets compared with init's records once a turn (ledgerwatch.h). */
#include <inttypes.h>
#include <stdlib.h>

#include "ledgermark.h"
#include "ledgerwatch.h"
#include "log.h"
#include "timeparse.h"
#include "turns.h"

struct ledgerwatch {
    struct turns turns;
    struct consumer *c;
    int64_t silent_since; /* the first look JetStream did not answer while connected (0: none) */
};

/* No answer to this look: past LEDGERWATCH_SILENT_MS on a connection that is up, said once. */
static void
silent(struct ledgerwatch *w, const char *why)
{
    int64_t now = sa_now_ms();

    if (natsConnection_Status(w->c->n->nc) != NATS_CONN_STATUS_CONNECTED) {
        w->silent_since = 0; /* a reconnect is said by nats.c's handlers, not here */
        return;
    }
    if (!w->silent_since)
        w->silent_since = now;
    if (now - w->silent_since < LEDGERWATCH_SILENT_MS || atomic_load(&w->c->js_silent))
        return;
    atomic_store(&w->c->js_silent, 1);
    sa_log(SA_LOG_ERROR, "jetstream_silent",
           "silent_ms=%" PRId64 " error=\"%s\" (connected, but JetStream answers nothing: a full "
           "store disk stops nats-server 2.9's JetStream until it is restarted, even once space "
           "is back; free space, then restart nats-server; the tasks wait in the stream)",
           now - w->silent_since, why);
}

static void
look(void *arg)
{
    struct ledgerwatch *w = arg;
    struct sa_err why = {0};
    enum sa_code rc = sa_ledger_check(w->c->n, &why);
    int was = atomic_load(&w->c->ledger_lost);

    if (rc == SA_ERETRY) {
        silent(w, why.msg);
        return;
    }
    if (atomic_exchange(&w->c->js_silent, 0))
        sa_log(SA_LOG_INFO, "jetstream_back", "silent_ms=%" PRId64, sa_now_ms() - w->silent_since);
    w->silent_since = 0;
    if (rc == SA_ENATS)
        return; /* an answer, but an error: the claims themselves say so */
    atomic_store(&w->c->ledger_lost, rc != SA_OK);
    if (rc != SA_OK && !was)
        sa_log(SA_LOG_ERROR, "ledger_lost", "error=\"%s\" (nothing is claimed or sent until then)",
               why.msg);
    else if (rc == SA_OK && was)
        sa_log(SA_LOG_INFO, "ledger_back", "claims_buckets=%d", w->c->n->layout.shards);
}

enum sa_code
ledgerwatch_start(struct ledgerwatch **out, struct consumer *c, struct sa_err *err)
{
    struct ledgerwatch *w = calloc(1, sizeof(*w));

    *out = NULL;
    if (!w)
        return sa_fail(err, SA_ENOMEM, "no memory for the claims bucket watch");
    w->c = c;
    if (turns_start(&w->turns, LEDGERWATCH_MS, &c->stopping, look, w, "claims bucket watch", err) !=
        SA_OK) {
        free(w);
        return err ? err->code : SA_ENOMEM;
    }
    *out = w;
    return SA_OK;
}

void
ledgerwatch_stop(struct ledgerwatch *w)
{
    if (!w)
        return;
    turns_stop(&w->turns);
    free(w);
}
