/* What the fleet is doing, for `sendat stats` and `GET /v1/stats` (stats.c): the level
 * durables with their pending, unacked and waiting pulls, the dead-letter count, the members
 * alive (the members bucket, whose TTL forgets the dead) with their last hour summed from
 * their beats, and what the consumers' sweep found that no level would ever read (the meta
 * record "sweep"). Each part that cannot be read is left empty or null. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lateness.h"
#include "stats_fleet.h"
#include "sweeprec.h"
#include "timeparse.h"

/* The start of the level a durable serves ("w<ms>" or "s<ms>"), 0 for another name. */
static int64_t
durable_start(const jsConsumerInfo *ci)
{
    const char *name = ci->Name ? ci->Name : "";

    return (name[0] == 'w' || name[0] == 's') ? strtoll(name + 1, NULL, 10) : 0;
}

static int
is_park(const jsConsumerInfo *ci)
{
    return ci->Name && !strcmp(ci->Name, SA_PARK_DURABLE);
}

/* Levels by their start, the park (what did not open: consumer/wheel/park.h) last. */
static int
by_start(const void *a, const void *b)
{
    const jsConsumerInfo *ca = *(jsConsumerInfo *const *)a, *cb = *(jsConsumerInfo *const *)b;
    int64_t x = is_park(ca) ? INT64_MAX : durable_start(ca),
            y = is_park(cb) ? INT64_MAX : durable_start(cb);

    return (x > y) - (x < y);
}

/* One shard's level durables in time order, added to out; past ones with nothing left are
 * only counted in *idle. */
static void
shard_pulling(struct sa_nats *n, int k, json_t *out, json_int_t *idle)
{
    jsConsumerInfoList *list = NULL;
    char at[40], stream[32];

    sa_layout_stream(stream, sizeof(stream), k);
    if (js_Consumers(&list, n->js, stream, NULL, NULL) != NATS_OK || !list)
        return;
    qsort(list->List, (size_t)list->Count, sizeof(list->List[0]), by_start);
    for (int i = 0; i < list->Count; i++) {
        jsConsumerInfo *ci = list->List[i];
        if (is_park(ci) && !ci->NumPending && !ci->NumAckPending)
            continue; /* nothing parked: not a level, not worth a line */
        if (!is_park(ci) && durable_start(ci) < sa_now_ms() - n->layout.window_ms &&
            !ci->NumPending && !ci->NumAckPending) {
            (*idle)++;
            continue;
        }
        if (is_park(ci))
            snprintf(at, sizeof(at), "-");
        else
            sa_time_format(at, sizeof(at), durable_start(ci));
        json_array_append_new(out, json_pack("{s:i, s:s, s:s, s:s, s:I, s:I, s:I}", "shard", k,
                                             "durable", ci->Name, "level",
                                             is_park(ci)                      ? "park"
                                             : ci->Name && ci->Name[0] == 's' ? "slot"
                                                                              : "window",
                                             "start", at, "pending", (json_int_t)ci->NumPending,
                                             "unacked", (json_int_t)ci->NumAckPending, "waiting",
                                             (json_int_t)ci->NumWaiting));
    }
    jsConsumerInfoList_Destroy(list);
}

/* The level durables of every shard, each shard's in time order. */
static json_t *
pulling(struct sa_nats *n, json_t *doc)
{
    json_t *out = json_array();
    json_int_t idle = 0;

    for (int k = 0; k < n->layout.shards; k++)
        shard_pulling(n, k, out, &idle);
    json_object_set_new(doc, "idle_past_durables", json_integer(idle));
    return out;
}

static json_t *
dead_letters(struct sa_nats *n)
{
    jsStreamInfo *si = NULL;
    json_t *out = json_null();

    if (js_GetStreamInfo(&si, n->js, SA_DLQ_STREAM, NULL, NULL) == NATS_OK)
        out = json_integer((json_int_t)si->State.Msgs);
    jsStreamInfo_Destroy(si);
    return out;
}

/* One member from its entry: name, instance, its last beat and, from the JSON after the
 * instance id, what it holds, has in flight and has sent, retried and dead-lettered. */
static json_t *
member(const char *name, kvEntry *e)
{
    const char *value = kvEntry_ValueString(e), *space = strchr(value, ' ');
    int64_t beat_ms = kvEntry_Created(e) / 1000000;
    json_t *facts = space ? json_loads(space + 1, 0, NULL) : NULL;
    json_t *out;
    char at[40];

    sa_time_format(at, sizeof(at), beat_ms);
    out = json_pack("{s:s, s:s%, s:s, s:I}", "name", name, "instance", value,
                    space ? (size_t)(space - value) : strlen(value), "last_beat", at, "beat_age_ms",
                    (json_int_t)(sa_now_ms() - beat_ms));
    if (json_is_object(facts))
        json_object_update(out, facts);
    json_decref(facts);
    return out;
}

static json_t *
members(struct sa_nats *n)
{
    kvStore *kv = NULL;
    kvKeysList keys = {0};
    json_t *out = json_array();

    if (js_KeyValue(&kv, n->js, SA_MEMBERS_BUCKET) != NATS_OK)
        return out;
    if (kvStore_Keys(&keys, kv, NULL) == NATS_OK) {
        for (int i = 0; i < keys.Count; i++) {
            kvEntry *e = NULL;
            if (strncmp(keys.Keys[i], SA_MEMBERS_RESCUE_PREFIX,
                        strlen(SA_MEMBERS_RESCUE_PREFIX)) && /* a lock, not a member */
                kvStore_Get(&e, kv, keys.Keys[i]) == NATS_OK)
                json_array_append_new(out, member(keys.Keys[i], e));
            kvEntry_Destroy(e);
        }
    }
    kvKeysList_Destroy(&keys);
    kvStore_Destroy(kv);
    return out;
}

#define HOUR_MINUTES 60

struct hour {
    json_int_t minute; /* the current wall-clock minute */
    json_int_t sent[HOUR_MINUTES], retried[HOUR_MINUTES], dead[HOUR_MINUTES]; /* [0]: now */
    json_int_t dispatch[LATENESS_BUCKETS + 1], delivery[LATENESS_BUCKETS + 1];
};

static void
add_buckets(json_int_t sum[], json_t *list)
{
    for (size_t i = 0; i < LATENESS_BUCKETS + 1 && i < json_array_size(list); i++)
        sum[i] += json_integer_value(json_array_get(list, i));
}

/* Adds one member's minutes and lateness (its beat's facts) to the fleet's hour, and takes
 * them out of the member's own object. */
static void
add_member_hour(struct hour *h, json_t *m)
{
    json_int_t minute = json_integer_value(json_object_get(m, "minute"));
    json_t *per = json_object_get(m, "per_minute");

    for (size_t j = 0; j < json_array_size(per); j++) {
        json_int_t age = h->minute - (minute - (json_int_t)j);
        json_t *c = json_array_get(per, j);

        if (age < 0 || age >= HOUR_MINUTES)
            continue;
        h->sent[age] += json_integer_value(json_array_get(c, 0));
        h->retried[age] += json_integer_value(json_array_get(c, 1));
        h->dead[age] += json_integer_value(json_array_get(c, 2));
    }
    add_buckets(h->dispatch, json_object_get(m, "dispatch"));
    add_buckets(h->delivery, json_object_get(m, "delivery"));
    for (const char **k = (const char *[]){"minute", "per_minute", "dispatch", "delivery", NULL};
         *k; k++)
        json_object_del(m, *k);
}

static json_t *
int_list(const json_int_t *v, size_t n)
{
    json_t *out = json_array();

    for (size_t i = 0; i < n; i++)
        json_array_append_new(out, json_integer(v[i]));
    return out;
}

/* The fleet's last hour from its members' beats: sent, retried and dead-lettered per minute
 * (newest first), and the dispatch and delivery lateness by bucket (bounds_ms, then one past
 * the last bound). */
static json_t *
delivery(json_t *members)
{
    struct hour h = {.minute = sa_now_ms() / 60000};
    json_t *minutes = json_array(), *bounds = json_array();
    size_t i;
    json_t *m;
    char at[40];

    json_array_foreach(members, i, m) add_member_hour(&h, m);
    for (int a = 0; a < HOUR_MINUTES; a++) {
        sa_time_format(at, sizeof(at), (h.minute - a) * 60000);
        json_array_append_new(minutes,
                              json_pack("{s:s, s:I, s:I, s:I}", "minute", at, "sent", h.sent[a],
                                        "retried", h.retried[a], "dead", h.dead[a]));
    }
    for (int b = 0; b < LATENESS_BUCKETS; b++)
        json_array_append_new(bounds, json_integer(lateness_bounds_ms[b]));
    return json_pack("{s:o, s:o, s:o, s:o}", "minutes", minutes, "bounds_ms", bounds, "dispatch",
                     int_list(h.dispatch, LATENESS_BUCKETS + 1), "delivery",
                     int_list(h.delivery, LATENESS_BUCKETS + 1));
}

/* One shard's sweep record, or NULL if it was never swept. */
static json_t *
sweep_shard(struct sa_nats *n, int k, struct sa_sweep_record *r)
{
    kvEntry *e = NULL;
    json_t *out = NULL;
    char at[40], key[32];

    sa_layout_meta_key(key, sizeof(key), SA_SWEEP_KEY, k);
    if (kvStore_Get(&e, n->meta, key) == NATS_OK &&
        sa_sweep_record_parse(r, kvEntry_ValueString(e), NULL) == SA_OK) {
        sa_time_format(at, sizeof(at), r->last_run_ms);
        out = json_pack("{s:i, s:I, s:s, s:I, s:I}", "shard", k, "found", (json_int_t)r->found,
                        "last_run", at, "next_seq", (json_int_t)r->next_seq, "checked",
                        (json_int_t)r->checked);
    }
    kvEntry_Destroy(e);
    return out;
}

json_t *
stats_fleet_sweep(struct sa_nats *n)
{
    struct sa_sweep_record r;
    json_t *shards = json_array(), *out;
    json_int_t found = 0, checked = 0;
    int64_t oldest = INT64_MAX;
    char at[40];

    for (int k = 0; k < n->layout.shards; k++) {
        json_t *one = sweep_shard(n, k, &r);
        if (!one) {
            oldest = INT64_MIN; /* never swept */
            continue;
        }
        found += (json_int_t)r.found;
        checked += (json_int_t)r.checked;
        oldest = r.last_run_ms < oldest ? r.last_run_ms : oldest;
        json_array_append_new(shards, one);
    }
    if (json_array_size(shards) == 0 || n->layout.shards == 1) {
        out = json_array_size(shards) ? json_incref(json_array_get(shards, 0)) : json_null();
        json_object_del(out, "shard");
        json_decref(shards);
        return out;
    }
    out = json_pack("{s:I, s:I, s:o}", "found", found, "checked", checked, "shards", shards);
    if (oldest != INT64_MIN) {
        sa_time_format(at, sizeof(at), oldest);
        json_object_set_new(out, "last_run", json_string(at));
    }
    return out;
}

/* Who of the members alive (a beat within MEMBER_SILENT_MS) can send mail, from their beats'
 * "mail" fact (a member from before it says nothing and is not counted), and how many email
 * tasks those without SMTP settings left to the others; "waits": no member alive can send
 * mail, so email tasks wait. */
static json_t *
mail(json_t *members)
{
    json_int_t can = 0, cannot = 0, left = 0;
    size_t i;
    json_t *m;

    json_array_foreach(members, i, m)
    {
        json_t *fact = json_object_get(m, "mail");

        if (!json_is_boolean(fact) ||
            json_integer_value(json_object_get(m, "beat_age_ms")) > MEMBER_SILENT_MS)
            continue;
        can += json_is_true(fact);
        cannot += json_is_false(fact);
        left += json_integer_value(json_object_get(m, "mail_left"));
    }
    return json_pack("{s:I, s:I, s:I, s:b}", "can_send", can, "cannot_send", cannot, "left", left,
                     "waits", can == 0 && cannot > 0);
}

void
stats_fleet_add(struct sa_nats *n, json_t *doc)
{
    json_object_set_new(doc, "pulling", pulling(n, doc));
    json_object_set_new(doc, "dead_letters", dead_letters(n));
    json_object_set_new(doc, "members", members(n));
    json_object_set_new(doc, "mail", mail(json_object_get(doc, "members")));
    json_object_set_new(doc, "delivery", delivery(json_object_get(doc, "members")));
}
