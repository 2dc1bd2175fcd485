/* A living member is never taken for dead, whatever a client writes into the members bucket
 * (issue 24.2): a rogue client forges the entries of two members of three and undoes every
 * rescue key while the fleet sends; nothing is sent twice or lost, and the member really killed
 * is still found dead. (Split from test_failover.c, whose tests kill and stop members.) */
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "check.h"
#include "fixture.h"
#include "layout.h"

static struct fx F;

static int
held_by(int i)
{
    return (int)fx_consumer_metric(&F, i, "sendat_held");
}

/* A rogue client of the members bucket (issue 24.2): each time a member other than spare
 * writes its entry, it writes a made-up instance id over it within a millisecond or two, and
 * it deletes every rescue key a member creates (so every forged death would be rescued again). */
struct forger {
    const char *url;
    const char *spare; /* the member whose entry is left alone */
    _Atomic int stop;
    _Atomic int forged;
    _Atomic int rescues_undone;
};

static void
made_up_instance(char *out, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t len = n - 1 < 16 ? n - 1 : 16;

    for (size_t i = 0; i < len; i++)
        out[i] = hex[rand() % 16];
    out[len] = '\0';
}

static void
forge_one(struct forger *fg, kvStore *kv, kvEntry *e)
{
    const char *key = kvEntry_Key(e), *value = kvEntry_ValueString(e);
    char fake[20];
    uint64_t rev;

    if (kvEntry_Operation(e) != kvOp_Put || !value)
        return;
    if (!strncmp(key, SA_MEMBERS_RESCUE_PREFIX, strlen(SA_MEMBERS_RESCUE_PREFIX))) {
        if (kvStore_Delete(kv, key) == NATS_OK)
            fg->rescues_undone++;
        return;
    }
    if (!strchr(value, ' ') || !strcmp(key, fg->spare))
        return; /* ours (a member's own beat carries its facts after a space), or spared */
    made_up_instance(fake, sizeof(fake));
    if (kvStore_PutString(&rev, kv, key, fake) == NATS_OK)
        fg->forged++;
}

static void *
forge(void *arg)
{
    struct forger *fg = arg;
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    kvStore *kv = NULL;
    kvWatcher *w = NULL;

    if (natsConnection_ConnectTo(&nc, fg->url) != NATS_OK ||
        natsConnection_JetStream(&js, nc, NULL) != NATS_OK ||
        js_KeyValue(&kv, js, SA_MEMBERS_BUCKET) != NATS_OK ||
        kvStore_WatchAll(&w, kv, NULL) != NATS_OK) {
        fprintf(stderr, "the forger could not watch the members bucket\n");
        goto out;
    }
    while (!fg->stop) {
        kvEntry *e = NULL;

        if (kvWatcher_Next(&e, w, 200) != NATS_OK || !e)
            continue;
        forge_one(fg, kv, e);
        kvEntry_Destroy(e);
    }
out:
    kvWatcher_Destroy(w);
    kvStore_Destroy(kv);
    fx_js_close(&nc, &js);
    return NULL;
}

#define FORGED_N 240

static int forged_seen[FORGED_N];

static int
forged_all_arrived(void *arg)
{
    (void)arg;
    return fx_arrivals(&F, "/f/", forged_seen, FORGED_N) == FORGED_N;
}

static int
three_run(void *arg)
{
    (void)arg;
    return held_by(0) >= 0 && held_by(1) >= 0 && held_by(2) >= 0;
}

/* Lines of consumer i's log that hold word. */
static int
log_count(int i, const char *word)
{
    return proc_count_lines(F.consumers[i].err_path, word);
}

/* FORGED_N tasks due over 6 s from start, each to /f/<k>, every fourth at-most-once. */
static void
book_spread(int64_t start)
{
    char path[300], out[256], err[4096];
    FILE *f;

    snprintf(path, sizeof(path), "%s/forged.ndjson", F.dir);
    f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < FORGED_N; i++) {
        int64_t due = start + (int64_t)i * 6000 / FORGED_N;
        fprintf(f, "{\"at\":\"@%" PRId64 ".%03d\",\"webhook\":\"%s/f/%d\",\"id\":\"f-%d\"%s}\n",
                due / 1000, (int)(due % 1000), receiver_url(F.recv), i, i,
                i % 4 == 3 ? ",\"at-most-once\":true" : "");
    }
    fclose(f);
    assert_int_equal(
        fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--batch", path, NULL), 0);
}

/* Issue 24.2: a client writes made-up instance ids over the entries of c0 and c1 (and undoes
 * the rescue keys) right after each of their beats, while the fleet sends tasks that are in
 * flight for a second each. c2, whose entry it leaves alone, is killed before the first task
 * is due and holds no send: its rescue hands every unacked task of the shard, c0's and c1's
 * sends in flight included, to whoever pulls it, so c0 and c1 judge each other's "sending"
 * claims while their entries are forged. No living member is taken for dead: nothing is sent
 * twice, nothing is lost, no at-most-once task is dead-lettered as "outcome unknown", c0 and c1
 * are never found dead, and c2 is. */
static void
test_forged_members_kill_nobody(void **state)
{
    struct forger fg = {0};
    pthread_t t;
    int64_t start;
    int twice = 0, living_rescued = 0, c2_dead = 0, unknown = 0;

    (void)state;
    fx_ack_wait = "60s"; /* a copy sent twice can only come from a claim taken over */
    fx_start(&F, 0);
    for (int i = 0; i < 3; i++)
        fx_consumer(&F, i, NULL);
    assert_true(wait_until(three_run, NULL, 10000));
    fg.url = F.srv.url;
    fg.spare = "c2";
    assert_int_equal(pthread_create(&t, NULL, forge, &fg), 0);
    receiver_set_delay(F.recv, 1000); /* every send holds its "sending" claim for a second */
    start = test_now_ms() + (int64_t)(4000 * test_timeout_multiplier());
    book_spread(start);
    wait_until_ms(start - 500, 30000);
    proc_kill9(&F.consumers[2]);
    if (!wait_until(forged_all_arrived, NULL, 40000)) {
        fx_print_log(&F, 0);
        fx_print_log(&F, 1);
        fail_msg("arrived %d of %d", fx_arrivals(&F, "/f/", forged_seen, FORGED_N), FORGED_N);
    }
    wait_until_ms(test_now_ms() + 3000, 3000); /* a second copy of anything would come now */
    fg.stop = 1;
    pthread_join(t, NULL);
    fx_arrivals(&F, "/f/", forged_seen, FORGED_N);
    for (int k = 0; k < FORGED_N; k++)
        twice += forged_seen[k] > 1;
    for (int i = 0; i < 2; i++) {
        living_rescued += log_count(i, "event=member_dead member=c0 ");
        living_rescued += log_count(i, "event=member_dead member=c1 ");
        c2_dead += log_count(i, "event=member_dead member=c2 ");
        unknown += log_count(i, "event=dead_letter ");
    }
    fprintf(stderr,
            "forger: %d entries forged, %d rescue keys deleted; %d of %d tasks sent twice, "
            "living members found dead %d times, c2 %d times, %d dead letters\n",
            fg.forged, fg.rescues_undone, twice, FORGED_N, living_rescued, c2_dead, unknown);
    assert_true(fg.forged >= 10); /* it did forge, beat after beat */
    if (twice || living_rescued || !c2_dead || unknown) {
        fx_print_log(&F, 0);
        fx_print_log(&F, 1);
    }
    assert_int_equal(twice, 0);
    assert_int_equal(living_rescued, 0);
    assert_int_equal(unknown, 0); /* no at-most-once task of a living holder is "outcome unknown" */
    assert_true(c2_dead >= 1);    /* a member really killed is still found, forger or not */
    fx_finish(&F);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forged_members_kill_nobody),
    };

    return FX_RUN(tests);
}
