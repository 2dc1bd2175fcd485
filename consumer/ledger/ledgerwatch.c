/* The claims buckets compared with init's records once a turn (ledgerwatch.h). */
#include <stdlib.h>

#include "ledgermark.h"
#include "ledgerwatch.h"
#include "log.h"
#include "turns.h"

struct ledgerwatch {
    struct turns turns;
    struct consumer *c;
};

static void
look(void *arg)
{
    struct ledgerwatch *w = arg;
    struct sa_err why = {0};
    enum sa_code rc = sa_ledger_check(w->c->n, &why);
    int was = atomic_load(&w->c->ledger_lost);

    if (rc == SA_ENATS || rc == SA_ERETRY)
        return; /* the server did not answer: the claims themselves say so */
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
