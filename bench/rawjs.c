/* sendat-rawjs: what JetStream itself does on this machine, on streams of its own shaped like
 * sendat's (work queue, file storage, one subject per message), so sendat's figures can be
 * read against the broker's in the same run. Also the small queries bench/run.sh needs.
 *
 *   sendat-rawjs bench  --server URL --n N --size BYTES [--replicas R] [--batch B]
 *                       [--sync-seconds S] [--kv-n K] [--server-pid PID[,PID...]]
 *                       [--sink URL [--inflight K]]   also pull + POST + ack to URL
 *                       [--pace-n P --pace-seconds S]  and P more sent evenly over S seconds
 *                       [--post-batch B]  pulls of B in the POST phases (default 64)
 *                       [--post-only 1 [--hold-file F]]  only the pull + POST + ack phase, its
 *                       stream left in place; with F: F written once the N are stored and
 *                       the durable made, then the pulls wait until F.go exists
 *   sendat-rawjs sealed --url URL --data TEXT      size of one sealed task (no broker)
 *   sendat-rawjs fill   --server URL --n N --size BYTES --subjects K [--msg-id 0]
 *                       N messages (Msg-Id and one header, like a task; --msg-id 0: no
 *                       Msg-Id) onto K subjects
 *                       (K = N: one subject per message), left in the stream RAWJS
 *   sendat-rawjs junk   --server URL --n N --window MS   N junk messages (look sealed under
 *                       an unknown key) into that window level, as a keyless client could;
 *                       [--shape garbage|realkey|one|slot [--slot MS]]: other junk (rawtools.c)
 *   sendat-rawjs info   --server URL --stream NAME messages, bytes, subjects of a stream
 *   sendat-rawjs batch  --server URL [--kv-n N] [--replicas R] [--server-pid PID[,PID...]]
 *                       [--fast 1] [--clients K]
 *                       N claim-like KV creates one by one, then in atomic batches of 8, 16,
 *                       64 (rawbatch.c; nats-server 2.12+); --fast 1: also one fast batch
 *                       (2.14+); --clients K: from K connections at once
 *   sendat-rawjs claims --server URL [--dump FILE] moves and lateness from the claim records
 *                                                 (FILE: "<id> <moves> <lateness> <consumer>")
 *   sendat-rawjs native --server URL --n N --size BYTES --due-ms MS [--spread-ms MS]
 *                       [--replicas R] [--sink URL [--inflight K] [--wait-seconds S]]
 *                       (or --due-in-ms MS [--align-ms A]: MS after the stream is made,
 *                       rounded up to a multiple of A)
 *                       N schedules of the server's own scheduler (ADR-51) due from MS on,
 *                       spread over --spread-ms; with --sink, what fires is pulled, POSTed and
 *                       acked; without, the schedules are left waiting in the stream NATIVE.
 *                       Exit 3 (and "supported":false) on a server without schedules.
 *   sendat-rawjs ledger --server URL --n N --size BYTES --sink URL [--replicas R]
 *                       [--batch B] [--inflight K] [--group-ms MS] [--cancel-every K]
 *                       [--watch-thread 1] [--server-pid PID[,PID...]]
 *                       the raw pull + POST + ack loop behind a per-batch claim ledger: one
 *                       claim record per pull of B, sent once an ordered watcher read it, one
 *                       outcome record per MS (default 10) of finished sends, acks on its
 *                       PubAck (rawledger.c); --cancel-every K: every K-th id cancelled first;
 *                       --watch-thread 1: the watcher read on the library's thread
 *
 * Every command prints one JSON object on stdout; progress goes to stderr. This file reads the
 * flags and runs the command: bench and fill are in rawbench.c, the others in rawtools.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <nats/nats.h>
#include <sodium.h>

#include "rawjs.h"
#include "rawmeter.h"
#include "rawpull.h"

void
rawjs_die(const char *what, natsStatus s)
{
    fprintf(stderr, "sendat-rawjs: %s: %s (%s)\n", what, natsStatus_GetText(s),
            nats_GetLastError(NULL));
    exit(1);
}

natsConnection *
rawjs_connect(const char *url)
{
    natsOptions *o = NULL;
    natsConnection *nc = NULL;
    char *copy = strdup(url), *save = NULL, *tok;
    const char *list[16];
    int n = 0;
    natsStatus s = natsOptions_Create(&o);

    for (tok = strtok_r(copy, ",", &save); tok && n < 16; tok = strtok_r(NULL, ",", &save))
        list[n++] = tok; /* a comma-separated list is a cluster */
    if (s == NATS_OK)
        s = natsOptions_SetServers(o, list, n);
    if (s == NATS_OK)
        s = natsOptions_SetTimeout(o, 10000);
    if (s == NATS_OK)
        s = natsConnection_Connect(&nc, o);
    natsOptions_Destroy(o);
    free(copy);
    if (s != NATS_OK)
        rawjs_die("connect", s);
    return nc;
}

/* Up to want messages in one pull; the request stays open up to 2 s. */
int
rawjs_pull(struct rawpull *sub, natsMsgList *list, long want, int batch)
{
    return rawpull_get(sub, list, want < batch ? (int)want : batch, 2000);
}

static _Noreturn void
usage(void)
{
    fputs(
        "usage: sendat-rawjs bench --server URL --n N --size BYTES [--replicas R] [--batch B]\n"
        "                          [--sync-seconds S] [--kv-n K] [--server-pid PID[,PID...]]\n"
        "                          [--sink URL [--inflight K]]\n"
        "                          [--pace-n P --pace-seconds S]\n"
        "                          [--post-only 1 [--hold-file F]] [--post-batch B]\n"
        "       sendat-rawjs sealed --url URL --data TEXT\n"
        "       sendat-rawjs fill --server URL --n N --size BYTES --subjects K [--msg-id 0]\n"
        "       sendat-rawjs junk --server URL --n N --window MS\n"
        "                         [--shape sealed|garbage|realkey|one|slot [--slot MS]]\n"
        "       sendat-rawjs info --server URL --stream NAME\n"
        "       sendat-rawjs claims --server URL [--dump FILE]\n"
        "       sendat-rawjs batch --server URL [--kv-n N] [--replicas R] [--fast 1]\n"
        "                          [--clients K]\n"
        "                          [--server-pid PID[,PID...]]\n"
        "       sendat-rawjs native --server URL --n N --size BYTES --due-ms MS [--spread-ms MS]\n"
        "                           [--due-in-ms MS [--align-ms A]] (instead of --due-ms)\n"
        "                           [--replicas R] [--sink URL [--inflight K]]\n"
        "                           [--wait-seconds S]\n"
        "       sendat-rawjs ledger --server URL --n N --size BYTES --sink URL [--replicas R]\n"
        "                           [--batch B] [--inflight K] [--group-ms MS]\n"
        "                           [--cancel-every K] [--watch-thread 1]\n"
        "                           [--server-pid PID[,PID...]]\n",
        stderr);
    exit(2);
}

/* The flags after the command ("--name value" pairs) into o; usage() on anything else. */
static void
parse_flags(struct rawjs_opts *o, int argc, char **argv)
{
    for (int i = 2; i < argc; i++) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            usage();
        i++;
        if (!strcmp(k, "--server"))
            o->server = v;
        else if (!strcmp(k, "--stream"))
            o->stream = v;
        else if (!strcmp(k, "--url"))
            o->url = v;
        else if (!strcmp(k, "--data"))
            o->data = v;
        else if (!strcmp(k, "--n"))
            o->n = atol(v);
        else if (!strcmp(k, "--kv-n"))
            o->kv_n = atol(v);
        else if (!strcmp(k, "--size"))
            o->size = atoi(v);
        else if (!strcmp(k, "--replicas"))
            o->replicas = atoi(v);
        else if (!strcmp(k, "--dump"))
            o->dump = v;
        else if (!strcmp(k, "--server-pid"))
            o->server_pids = v;
        else if (!strcmp(k, "--sink"))
            o->sink = v;
        else if (!strcmp(k, "--inflight"))
            o->inflight = atoi(v);
        else if (!strcmp(k, "--pace-n"))
            o->pace_n = atol(v);
        else if (!strcmp(k, "--pace-seconds"))
            o->pace_seconds = atof(v);
        else if (!strcmp(k, "--batch"))
            o->batch = atoi(v);
        else if (!strcmp(k, "--clients"))
            o->clients = atoi(v);
        else if (!strcmp(k, "--fast"))
            o->fast = atoi(v);
        else if (!strcmp(k, "--msg-id"))
            o->msg_id = atol(v);
        else if (!strcmp(k, "--window"))
            o->window = atoll(v);
        else if (!strcmp(k, "--slot"))
            o->slot = atoll(v);
        else if (!strcmp(k, "--shape"))
            o->shape = v;
        else if (!strcmp(k, "--subjects"))
            o->subjects = atol(v);
        else if (!strcmp(k, "--due-ms"))
            o->due_ms = atoll(v);
        else if (!strcmp(k, "--due-in-ms"))
            o->due_in_ms = atoll(v);
        else if (!strcmp(k, "--align-ms"))
            o->align_ms = atoll(v);
        else if (!strcmp(k, "--spread-ms"))
            o->spread_ms = atoll(v);
        else if (!strcmp(k, "--wait-seconds"))
            o->wait_seconds = atof(v);
        else if (!strcmp(k, "--sync-seconds"))
            o->sync_seconds = atof(v);
        else if (!strcmp(k, "--post-batch"))
            o->post_batch = atoi(v);
        else if (!strcmp(k, "--post-only"))
            o->post_only = atoi(v);
        else if (!strcmp(k, "--cancel-every"))
            o->cancel_every = atol(v);
        else if (!strcmp(k, "--watch-thread"))
            o->watch_thread = atoi(v);
        else if (!strcmp(k, "--group-ms"))
            o->group_ms = atof(v);
        else if (!strcmp(k, "--hold-file"))
            o->hold_file = v;
        else
            usage();
    }
}

typedef int rawjs_cmd_fn(const struct rawjs_opts *o);

/* The command's function, or NULL for an unknown one (or info without --stream). */
static rawjs_cmd_fn *
pick(const char *cmd, const struct rawjs_opts *o)
{
    if (!strcmp(cmd, "bench"))
        return rawjs_bench;
    if (!strcmp(cmd, "fill"))
        return rawjs_fill;
    if (!strcmp(cmd, "junk") && o->window > 0 && rawjs_junk_shape_ok(o))
        return rawjs_junk;
    if (!strcmp(cmd, "info") && o->stream)
        return rawjs_info;
    if (!strcmp(cmd, "claims"))
        return rawjs_claims;
    if (!strcmp(cmd, "batch"))
        return rawjs_batch;
    if (!strcmp(cmd, "ledger") && o->sink && o->group_ms > 0 && o->cancel_every >= 0)
        return rawjs_ledger;
    if (!strcmp(cmd, "native") && (o->due_ms > 0 || o->due_in_ms > 0) && o->spread_ms >= 0)
        return rawjs_native;
    return NULL;
}

int
main(int argc, char **argv)
{
    struct rawjs_opts o = {.n = 100000,
                           .shape = "sealed",
                           .kv_n = 20000,
                           .size = 256,
                           .replicas = 1,
                           .batch = 256,
                           .inflight = 256,
                           .sync_seconds = 5,
                           .msg_id = 1,
                           .wait_seconds = 60,
                           .group_ms = 10,
                           .post_batch = 64,
                           .url = "http://127.0.0.1:65535/x",
                           .data = "{}"};
    rawjs_cmd_fn *run = NULL;
    int rc;

    if (argc < 2)
        usage();
    parse_flags(&o, argc, argv);
    if (sodium_init() < 0 || curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return 1;
    if (o.server_pids)
        rawmeter_server_pids(o.server_pids);
    if (!strcmp(argv[1], "sealed"))
        return rawjs_sealed(&o);
    if (!o.server || o.n < 1 || o.size < 1 || o.batch < 1 || o.post_batch < 1 || o.kv_n < 1 ||
        (o.pace_n > 0 && o.pace_seconds <= 0))
        usage();
    run = pick(argv[1], &o);
    if (!run)
        usage(); /* before nats_Open: an unknown command starts nothing */
    nats_Open(-1);
    rc = run(&o);
    nats_CloseAndWait(5000);
    return rc;
}
