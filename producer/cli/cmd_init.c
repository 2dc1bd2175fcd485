/* sendat init: writes the layout once, then makes the task streams and claims buckets of its
 * shards, the dead-letter stream and the other buckets (book/provision.h) and leaves its marks
 * (init_marks.h). Safe to run from many places at once: every create accepts an existing
 * object, and the layout record is create-if-absent, so the first writer's numbers (the shard
 * count among them) hold for the whole cluster. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "claim.h"
#include "cli.h"
#include "init_marks.h"
#include "provision.h"

struct init_opts {
    struct cli cli;
    struct provision p; /* what to make */
    int layout_given;
    int shards_given;
    int layout_existed; /* an earlier init wrote the layout (settle_layout) */
};

static const char usage[] =
    "usage: sendat init [--server URL] [--replicas N] [--shards N] [--window DUR] [--slot DUR]\n"
    "                   [--ack-wait DUR] [--lead DUR] [--dedupe-window DUR]\n"
    "                   [--claims-ttl DUR] [--dlq-max-age DUR] [--dlq-max-bytes SIZE]\n"
    "                   [--max-tasks N] [--max-task-bytes SIZE]\n"
    "  creates streams and buckets; idempotent. DUR is like 250ms, 10s, 10m, 2h, 7d.\n"
    "  defaults: replicas 1, shards 1 (1-64 task streams, each with its claims bucket;\n"
    "            JetStream places their leaders), window 10m, slot 10s, ack-wait 30s, lead 2s,\n"
    "            dedupe-window 1h, claims-ttl 7d (at least 1h; 0s: for ever), dlq-max-age 30d,\n"
    "            dlq-max-bytes 1G\n"
    "  SIZE is bytes, or with K, M or G (1024-based); a full dead-letter stream drops its oldest.\n"
    "  --max-tasks N, --max-task-bytes SIZE: producers refuse new tasks (exit 7, HTTP 507)\n"
    "            once a task stream (each shard) holds that many; waiting tasks are never\n"
    "            deleted. Default none; a later init sets or changes them, 0 removes them.\n"
    "  the layout (shards, window, slot, ack-wait, lead) is written once; later runs keep it\n"
    "  and refuse different numbers (a task's shard follows from its id: no resharding).\n";

/* A size flag: "1G", "512M", "65536": at least 1 MiB, so a typo does not make every dead
 * letter drop (or every booking fail); 0 only where zero is allowed (zero_ok). 0, or -1 after
 * saying what is wrong. */
static int
parse_size_named(int64_t *out, const char *text, const char *flag, int zero_ok)
{
    char *end = NULL;
    long long v = strtoll(text, &end, 10);
    int shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;

    if (zero_ok && !strcmp(text, "0")) {
        *out = 0;
        return 0;
    }
    if (end == text || v < 1 || v > (1LL << 40) || (shift && end[1]) || (!shift && *end)) {
        cli_error(EXIT_USAGE, "init: --%s: want a size like 1G, 512M or 1048576", flag);
        return -1;
    }
    *out = (int64_t)v << shift;
    if (*out < (1 << 20) || *out > (1LL << 50)) {
        cli_error(EXIT_USAGE, "init: --%s: want 1M to 1024T%s", flag, zero_ok ? " (0: none)" : "");
        return -1;
    }
    return 0;
}

static int
parse_size(void *to, const char *text)
{
    return parse_size_named(to, text, "dlq-max-bytes", 0);
}

static int
parse_task_bytes(void *to, const char *text)
{
    return parse_size_named(to, text, "max-task-bytes", 1);
}

/* A layout duration: written once, so init notes that one was given. */
#define LAYOUT(n, field)                                                                           \
    {                                                                                              \
        .name = n, .kind = CLI_OPT_DURATION, .to = &o->p.layout.field, .given = &o->layout_given   \
    }

/* Reads the options into o and checks what the table cannot (replicas 1, 3 or 5; claims-ttl). */
static enum cli_opts_result
parse_opts(struct init_opts *o, int argc, char **argv)
{
    long replicas = o->p.replicas, shards = o->p.layout.shards;
    const struct cli_opt table[] = {
        CLI_OPT_SERVER(&o->cli),
        {.name = "replicas", .kind = CLI_OPT_LONG, .to = &replicas, .lo = 1, .hi = 5},
        {.name = "shards",
         .kind = CLI_OPT_LONG,
         .to = &shards,
         .lo = 1,
         .hi = SA_SHARDS_MAX,
         .given = &o->shards_given},
        LAYOUT("window", window_ms),
        LAYOUT("slot", slot_ms),
        LAYOUT("ack-wait", ack_wait_ms),
        LAYOUT("lead", lead_ms),
        {.name = "dedupe-window", .kind = CLI_OPT_DURATION, .to = &o->p.dedupe_ms},
        {.name = "claims-ttl", .kind = CLI_OPT_DURATION, .to = &o->p.claims_ttl_ms},
        {.name = "dlq-max-age", .kind = CLI_OPT_DURATION, .to = &o->p.dlq_age_ms},
        {.name = "dlq-max-bytes", .kind = CLI_OPT_CALL, .to = &o->p.dlq_bytes, .call = parse_size},
        {.name = "max-tasks",
         .kind = CLI_OPT_LONG,
         .to = &o->p.max_tasks,
         .lo = 0,
         .hi = 1000000000000L,
         .given = &o->p.limits_given},
        {.name = "max-task-bytes",
         .kind = CLI_OPT_CALL,
         .to = &o->p.max_task_bytes,
         .call = parse_task_bytes,
         .given = &o->p.limits_given},
        {0},
    };
    int rest = 0;
    enum cli_opts_result r = cli_opts_parse("init", usage, table, argc, argv, &rest);

    if (r != CLI_OPTS_OK)
        return r;
    o->p.replicas = (int)replicas;
    o->p.layout.shards = (int)shards;
    if (rest != argc)
        return cli_bad("init: unexpected argument %s", argv[rest]);
    if (replicas != 1 && replicas != 3 && replicas != 5)
        return cli_bad("init: --replicas must be 1, 3 or 5");
    if (o->p.claims_ttl_ms && o->p.claims_ttl_ms < SA_CLAIMS_TTL_MIN_MS)
        return cli_bad("init: --claims-ttl must be at least 1h (or 0s: for ever): consumers "
                       "refuse a task due longer ago than the claim ledger remembers");
    return CLI_OPTS_OK;
}

#undef LAYOUT

/* Writes o's layout if there is none (the first init's numbers hold) and leaves the one in
 * force in n->layout and o->p.layout. Numbers given that differ from the record are refused,
 * the shard count with its own reason. */
static int
settle_layout(struct sa_nats *n, struct init_opts *o)
{
    char text[160];
    struct sa_err err = {0};
    uint64_t rev;

    sa_layout_format(text, sizeof(text), &o->p.layout);
    if (kvStore_CreateString(&rev, n->meta, "layout", text) == NATS_OK) {
        n->layout = o->p.layout;
        return EXIT_OK;
    }
    o->layout_existed = 1;
    if (sa_nats_read_layout(n, &err) != SA_OK)
        return cli_error(EXIT_FAIL, "init: layout: %s", err.msg);
    if (o->shards_given && n->layout.shards != o->p.layout.shards)
        return cli_error(EXIT_USAGE,
                         "init: this cluster has %d shard(s), not %d: a task's shard follows "
                         "from its id, so the count cannot change (resharding is not "
                         "supported; start a new cluster or account for another count)",
                         n->layout.shards, o->p.layout.shards);
    o->p.layout.shards = n->layout.shards;
    if (o->layout_given && !sa_layout_equal(&n->layout, &o->p.layout)) {
        sa_layout_format(text, sizeof(text), &n->layout);
        return cli_error(EXIT_USAGE, "init: the layout is already %s and cannot change", text);
    }
    o->p.layout = n->layout;
    return EXIT_OK;
}

int
cmd_init(int argc, char **argv)
{
    struct init_opts o = {.p = {.replicas = 1,
                                .dedupe_ms = 3600000,
                                .claims_ttl_ms = 7 * 86400000LL,
                                .dlq_age_ms = 30 * 86400000LL,
                                .dlq_bytes = 1LL << 30,
                                .max_tasks = -1,
                                .max_task_bytes = -1}};
    struct sa_nats *n = NULL;
    struct sa_err err = {0};
    enum sa_code rc;
    enum cli_opts_result r;
    int code;

    sa_layout_defaults(&o.p.layout);
    if ((r = parse_opts(&o, argc, argv)) != CLI_OPTS_OK)
        return cli_opts_exit(r);
    if (sa_layout_check(&o.p.layout, &err) != SA_OK)
        return cli_error(EXIT_USAGE, "init: %s", err.msg);
    if (sa_nats_connect(&n, o.cli.server, "sendat-init", SA_INBOX_PRODUCER, &err) != SA_OK)
        return cli_error(EXIT_FAIL, "%s", err.msg);
    rc = provision_meta(n, o.p.replicas, &err);
    code = rc == SA_OK ? settle_layout(n, &o) : cli_error(EXIT_FAIL, "init: %s", err.msg);
    if (code == EXIT_OK && provision_all(n, &o.p, init_record_ledger, &err) != SA_OK)
        code = cli_error(cli_exit_for(err.code), "init: %s", err.msg);
    if (code == EXIT_OK && init_mark_mac_since(n, o.layout_existed, &err) != SA_OK)
        code = cli_error(cli_exit_for(err.code), "init: %s", err.msg);
    cli_close(n);
    if (code == EXIT_OK)
        puts("ok");
    return code;
}
