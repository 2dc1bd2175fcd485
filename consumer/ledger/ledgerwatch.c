/* The claims buckets compared with init's records, one a turn (ledgerwatch.h). */
#include <inttypes.h>
#include <stdint.h>

#include "ledgermark.h"
#include "ledgerwatch.h"
#include "log.h"
#include "timeparse.h"
#include "turns.h"

struct ledgerwatch {
    struct turns turns; /* first: turns_spawn */
    struct consumer *c;
    int64_t silent_since; /* the first look JetStream did not answer while connected (0: none) */
    int next;             /* the shard the round robin looks at next */
    uint64_t lost;        /* bit k: shard k's claims bucket was found not init's */
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

/* Looks at shard k: 1 if JetStream answered (a verdict or an error), 0 if it did not. Found
 * lost, the reason goes into lost_why unless it holds one already. */
static int
look_at(struct ledgerwatch *w, int k, struct sa_err *lost_why)
{
    struct sa_err why = {0};
    enum sa_code rc = sa_ledger_check_shard(w->c->n, k, &why);

    if (rc == SA_ERETRY) {
        silent(w, why.msg);
        return 0;
    }
    if (atomic_exchange(&w->c->js_silent, 0))
        sa_log(SA_LOG_INFO, "jetstream_back", "silent_ms=%" PRId64, sa_now_ms() - w->silent_since);
    w->silent_since = 0;
    if (rc == SA_ENATS)
        return 1; /* an answer, but an error: the claims themselves say so */
    if (rc == SA_OK) {
        w->lost &= ~(1ull << k);
    } else {
        w->lost |= 1ull << k;
        if (!lost_why->msg[0])
            *lost_why = why;
    }
    return 1;
}

/* One turn: the next shard of the round robin (a stream info and a meta get, whatever the
 * shard count), then again each shard found lost, so that ledger_back comes within a turn of
 * `sendat init`. */
static void
look(void *arg)
{
    struct ledgerwatch *w = arg;
    struct sa_err why = {0};
    int shards = w->c->n->layout.shards, k = w->next, was = atomic_load(&w->c->ledger_lost);

    if (!look_at(w, k, &why))
        return; /* the same shard next turn */
    w->next = (k + 1) % shards;
    for (int j = 0; j < shards && !turns_stopping(&w->turns); j++)
        if (j != k && (w->lost & (1ull << j)))
            (void)look_at(w, j, &why);
    atomic_store(&w->c->ledger_lost, w->lost != 0);
    if (w->lost && !was)
        sa_log(SA_LOG_ERROR, "ledger_lost", "error=\"%s\" (nothing is claimed or sent until then)",
               why.msg);
    else if (!w->lost && was)
        sa_log(SA_LOG_INFO, "ledger_back", "claims_buckets=%d", shards);
}

static void
watch_init(void *obj, void *c)
{
    ((struct ledgerwatch *)obj)->c = c;
}

enum sa_code
ledgerwatch_start(struct ledgerwatch **out, struct consumer *c, struct sa_err *err)
{
    *out = turns_spawn(sizeof(**out), LEDGERWATCH_MS, &c->stopping, watch_init, c, look,
                       "claims bucket watch", err);
    return *out ? SA_OK : SA_ENOMEM;
}

void
ledgerwatch_stop(struct ledgerwatch *w)
{
    turns_free(w ? &w->turns : NULL);
}
