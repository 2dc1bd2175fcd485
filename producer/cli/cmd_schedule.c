/* sendat schedule: builds one task from flags, validates it, seals it and publishes it to its
 * window subject with the task id as Nats-Msg-Id (the same id twice schedules once). Prints
 * the id once JetStream has acknowledged it; bad input exits 2 and publishes nothing. A
 * duplicate PubAck is read back: the same task is "already scheduled" (exit 0), anything else
 * under the id exits 5, and an id whose task is gone exits 6 (dupcheck.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "book.h"
#include "cli.h"
#include "schedule.h"
#include "task.h"
#include "timeparse.h"

static const char usage[] =
    "usage: sendat schedule --at TIME --webhook URL [--data STRING | --data-file FILE]\n"
    "                       [--header 'Name: value']... [--id ID] [--not-after TIME]\n"
    "                       [--at-most-once] [--group NAME] [--server URL] [--key-file FILE]\n"
    "       sendat schedule --at TIME --email ADDR[,ADDR...] [--cc ADDR,...] [--bcc ADDR,...]\n"
    "                       --subject TEXT (--text TEXT | --text-file FILE) [--html-file FILE]\n"
    "                       [--from 'Name <addr>'] [--reply-to ADDR] [--id ID] [--not-after TIME]\n"
    "       sendat schedule ... --cron EXPR --tz ZONE [--at START] [--until TIME] [--count N]\n"
    "       sendat schedule --batch FILE|- [--template-file FILE] [--strict] [--json]\n"
    "  --cron: 5 fields (m h dom mon dow), 6 with seconds first, or @yearly/@annually/\n"
    "  @monthly/@weekly/@daily/@midnight/@hourly; --tz an IANA zone. Prints the series id;\n"
    "  `sendat cancel` stops the series.\n"
    "  --batch: one task per line, NDJSON whose keys are the long flag names (at, webhook,\n"
    "  data, header, id, not-after, email, cc, bcc, subject, text, html, from, reply-to), or CSV\n"
    "  with a header row when --template-file gives an NDJSON task with {{column}} fields.\n"
    "  Bad lines are reported and skipped (exit 2 at the end); --strict checks every line\n"
    "  first and publishes nothing if one is bad.\n"
    "  TIME: RFC 3339 with offset or Z (2026-11-22T09:30:00Z), +90s, +10m, +2h, +3d, @UNIX\n"
    "  prints the task id on stdout once JetStream has stored the task.\n"
    "  --data-file - reads the body from stdin; the body limit is 256 KiB.\n"
    "  --id ID (1-64 of A-Z a-z 0-9 _ -): scheduling the same task again schedules it once\n"
    "  (\"already scheduled\" on stderr, exit 0); another task under an id that is taken exits\n"
    "  5, and one whose task is no longer stored (sent, cancelled) exits 6: nothing is scheduled.\n"
    "  A task stream that holds its limit (set by sendat init, see its --help) takes nothing\n"
    "  new: exit 7 (a batch stops there; the lines before were booked).\n"
    "  --not-after TIME: dead-letter the task as expired instead of sending it later.\n"
    "  --at-most-once: if a consumer dies mid-send, dead-letter instead of sending again.\n"
    "  --group NAME (1-64 of A-Z a-z 0-9 _ -, not with --cron): `sendat cancel --group NAME`\n"
    "  cancels every task of the group not sent yet (batch lines: the key \"group\").\n"
    "  A literal address in --webhook that SENDAT_WEBHOOK_DENY or the built-in deny list refuses\n"
    "  (link-local, metadata, 0.0.0.0/8, multicast), and SENDAT_WEBHOOK_ALLOW does not\n"
    "  open, exits 2 (the consumers judge host names when they connect).\n";

static int
add_rcpt(struct sched_cmd *o, enum sa_rcpt kind, const char *list)
{
    if (book_add_rcpt(&o->req, kind, list) == 0)
        return 0;
    cli_error(EXIT_USAGE, "schedule: too many --email/--cc/--bcc flags");
    return -1;
}

static int
add_to(void *o, const char *list)
{
    return add_rcpt(o, SA_RCPT_TO, list);
}

static int
add_cc(void *o, const char *list)
{
    return add_rcpt(o, SA_RCPT_CC, list);
}

static int
add_bcc(void *o, const char *list)
{
    return add_rcpt(o, SA_RCPT_BCC, list);
}

#define STR(n, field)                                                                              \
    {                                                                                              \
        .name = n, .kind = CLI_OPT_STRING, .to = &o->req.field                                     \
    }
#define FLAG(n, field)                                                                             \
    {                                                                                              \
        .name = n, .kind = CLI_OPT_FLAG, .to = &o->req.field                                       \
    }

/* Reads the options into o and checks that they name one task (or a batch). */
static enum cli_opts_result
parse_opts(struct sched_cmd *o, int argc, char **argv)
{
    const struct cli_opt table[] = {
        STR("at", at),
        STR("webhook", webhook),
        STR("data", data),
        STR("data-file", data_file),
        {.name = "header",
         .kind = CLI_OPT_LIST,
         .to = o->req.headers,
         .count = &o->req.n_headers,
         .hi = SA_HEADERS_MAX},
        STR("id", id),
        STR("not-after", not_after),
        FLAG("at-most-once", at_most_once),
        CLI_OPT_SERVER(&o->cli),
        CLI_OPT_KEY_FILE(&o->cli),
        {.name = "email", .kind = CLI_OPT_CALL, .to = o, .call = add_to},
        {.name = "cc", .kind = CLI_OPT_CALL, .to = o, .call = add_cc},
        {.name = "bcc", .kind = CLI_OPT_CALL, .to = o, .call = add_bcc},
        STR("subject", subject),
        STR("text", text),
        STR("text-file", text_file),
        STR("html-file", html_file),
        STR("from", from),
        STR("reply-to", reply_to),
        {.name = "batch", .kind = CLI_OPT_STRING, .to = &o->batch},
        {.name = "template-file", .kind = CLI_OPT_STRING, .to = &o->template_file},
        {.name = "strict", .kind = CLI_OPT_FLAG, .to = &o->strict},
        CLI_OPT_JSON(&o->cli),
        STR("cron", cron),
        STR("tz", tz),
        STR("until", until),
        STR("count", count),
        STR("group", group),
        {0},
    };
    struct sa_err err = {0};
    int rest = 0;
    enum cli_opts_result r = cli_opts_parse("schedule", usage, table, argc, argv, &rest);

    if (r != CLI_OPTS_OK)
        return r;
    if (rest != argc)
        return cli_bad("schedule: unexpected argument %s", argv[rest]);
    if (o->batch)
        return batch_check_opts(o) == EXIT_OK ? CLI_OPTS_OK : CLI_OPTS_BAD;
    if (book_check(&o->req, &err) != SA_OK)
        return cli_bad("schedule: %s", err.msg);
    return CLI_OPTS_OK;
}

#undef STR
#undef FLAG

static int
schedule(const struct sched_cmd *o, const uint8_t *body, size_t body_len)
{
    struct sa_task *t = NULL;
    struct sa_keyring *ring = NULL;
    struct sa_nats *n = NULL;
    struct sa_err err = {0};
    char id[SA_ID_MAX + 1];
    enum sa_code rc;
    int code;

    if (sa_task_new(&t, &err) != SA_OK)
        return cli_error(EXIT_FAIL, "%s", err.msg);
    if (book_build_task(t, &o->req, body, body_len, sa_now_ms(), &err) != SA_OK) {
        code = cli_error(cli_exit_for(err.code), "schedule: %s", err.msg);
        goto out;
    }
    if ((code = cli_keyring(&o->cli, &ring)) != EXIT_OK ||
        (code = cli_connect(&o->cli, &n)) != EXIT_OK)
        goto out;
    rc = book_task(n, ring, t, o->req.id != NULL, id, NULL, &err);
    if (rc == SA_ECONFLICT || rc == SA_ENOTFOUND) {
        code = cli_error(rc == SA_ENOTFOUND ? EXIT_UNVERIFIED : EXIT_TAKEN,
                         "schedule: %s; nothing was scheduled", err.msg);
        goto out;
    }
    if (rc != SA_OK && rc != SA_EEXIST) {
        code = cli_error(cli_exit_for(err.code), "schedule: %s", err.msg);
        goto out;
    }
    if (rc == SA_EEXIST) /* stdout stays the id alone: scripts read it */
        fprintf(stderr, "sendat: schedule: %s: already scheduled\n", id);
    printf("%s\n", id);
out:
    cli_close(n);
    sa_keyring_free(ring);
    sa_task_free(t);
    return code;
}

int
cmd_schedule(int argc, char **argv)
{
    struct sched_cmd o = {0};
    char *body = NULL;
    size_t body_len = 0;
    struct sa_err err = {0};
    enum cli_opts_result r = parse_opts(&o, argc, argv);
    int code;

    if (r != CLI_OPTS_OK)
        return cli_opts_exit(r);
    if (o.batch)
        return batch_run(&o);
    if (o.req.data_file &&
        book_read_file(o.req.data_file, SA_BODY_MAX, &body, &body_len, &err) != SA_OK)
        return cli_error(cli_exit_for(err.code), "schedule: --data-file: %s", err.msg);
    if (o.req.data)
        code = schedule(&o, (const uint8_t *)o.req.data, strlen(o.req.data));
    else
        code = schedule(&o, (const uint8_t *)body, body_len);
    free(body);
    return code;
}
