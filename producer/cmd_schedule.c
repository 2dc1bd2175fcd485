/* sendat schedule: builds one task from flags, validates it, seals it and publishes it to its
 * window subject with the task id as Nats-Msg-Id (the same id twice schedules once). Prints
 * the id once JetStream has acknowledged it; bad input exits 2 and publishes nothing. A
 * duplicate PubAck is read back: the same task is "already scheduled" (exit 0), anything else
 * under the id exits 5, and an id whose task is gone exits 6 (dupcheck.h). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stddef.h>
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
    "  --not-after TIME: dead-letter the task as expired instead of sending it later.\n"
    "  --at-most-once: if a consumer dies mid-send, dead-letter instead of sending again.\n"
    "  --group NAME (1-64 of A-Z a-z 0-9 _ -, not with --cron): `sendat cancel --group NAME`\n"
    "  cancels every task of the group not sent yet (batch lines: the key \"group\").\n"
    "  A literal address in --webhook that SENDAT_WEBHOOK_DENY or the built-in deny list refuses\n"
    "  (link-local, metadata, 0.0.0.0/8, multicast), and SENDAT_WEBHOOK_ALLOW does not\n"
    "  open, exits 2 (the consumers judge host names when they connect).\n";

static const struct option opts[] = {{"at", required_argument, NULL, 'a'},
                                     {"webhook", required_argument, NULL, 'w'},
                                     {"data", required_argument, NULL, 'd'},
                                     {"data-file", required_argument, NULL, 'f'},
                                     {"header", required_argument, NULL, 'H'},
                                     {"id", required_argument, NULL, 'i'},
                                     {"not-after", required_argument, NULL, 'n'},
                                     {"at-most-once", no_argument, NULL, 'm'},
                                     {"server", required_argument, NULL, 'S'},
                                     {"key-file", required_argument, NULL, 'k'},
                                     {"email", required_argument, NULL, 'E'},
                                     {"cc", required_argument, NULL, 'C'},
                                     {"bcc", required_argument, NULL, 'B'},
                                     {"subject", required_argument, NULL, 's'},
                                     {"text", required_argument, NULL, 'x'},
                                     {"text-file", required_argument, NULL, 'X'},
                                     {"html-file", required_argument, NULL, 'M'},
                                     {"from", required_argument, NULL, 'F'},
                                     {"reply-to", required_argument, NULL, 'R'},
                                     {"batch", required_argument, NULL, 'b'},
                                     {"template-file", required_argument, NULL, 'T'},
                                     {"strict", no_argument, NULL, 'Z'},
                                     {"json", no_argument, NULL, 'j'},
                                     {"cron", required_argument, NULL, 'c'},
                                     {"tz", required_argument, NULL, 'z'},
                                     {"until", required_argument, NULL, 'u'},
                                     {"count", required_argument, NULL, 'N'},
                                     {"group", required_argument, NULL, 'g'},
                                     {"help", no_argument, NULL, 'h'},
                                     {NULL, 0, NULL, 0}};

/* The options whose value is kept as given, by their code in opts[], and where it goes. */
static const struct {
    int code;
    size_t off;
} as_given[] = {
    {'a', offsetof(struct sched_opts, at)},
    {'w', offsetof(struct sched_opts, webhook)},
    {'d', offsetof(struct sched_opts, data)},
    {'f', offsetof(struct sched_opts, data_file)},
    {'i', offsetof(struct sched_opts, id)},
    {'n', offsetof(struct sched_opts, not_after)},
    {'S', offsetof(struct sched_opts, cli.server)},
    {'k', offsetof(struct sched_opts, cli.key_file)},
    {'s', offsetof(struct sched_opts, subject)},
    {'x', offsetof(struct sched_opts, text)},
    {'X', offsetof(struct sched_opts, text_file)},
    {'M', offsetof(struct sched_opts, html_file)},
    {'F', offsetof(struct sched_opts, from)},
    {'R', offsetof(struct sched_opts, reply_to)},
    {'b', offsetof(struct sched_opts, batch)},
    {'T', offsetof(struct sched_opts, template_file)},
    {'c', offsetof(struct sched_opts, cron)},
    {'z', offsetof(struct sched_opts, tz)},
    {'u', offsetof(struct sched_opts, until)},
    {'N', offsetof(struct sched_opts, count)},
    {'g', offsetof(struct sched_opts, group)},
};

/* Keeps optarg for option c if its value is kept as given; 1 if it was. */
static int
keep_as_given(struct sched_opts *o, int c)
{
    for (size_t i = 0; i < sizeof(as_given) / sizeof(as_given[0]); i++)
        if (as_given[i].code == c) {
            *(const char **)((char *)o + as_given[i].off) = optarg;
            return 1;
        }
    return 0;
}

/* The other options: EXIT_OK, -1 after --help, or the usage error. */
static int
other_opt(struct sched_opts *o, int c, char **argv)
{
    switch (c) {
    case 'm':
        o->at_most_once = 1;
        return EXIT_OK;
    case 'Z':
        o->strict = 1;
        return EXIT_OK;
    case 'j':
        o->cli.json = 1;
        return EXIT_OK;
    case 'H':
        if (o->n_headers >= SA_HEADERS_MAX)
            return cli_error(EXIT_USAGE, "schedule: more than %d headers", SA_HEADERS_MAX);
        o->headers[o->n_headers++] = optarg;
        return EXIT_OK;
    case 'E':
    case 'C':
    case 'B':
        if (schedule_add_rcpt(o,
                              c == 'E'   ? SA_RCPT_TO
                              : c == 'C' ? SA_RCPT_CC
                                         : SA_RCPT_BCC,
                              optarg) != 0)
            return cli_error(EXIT_USAGE, "schedule: too many --email/--cc/--bcc flags");
        return EXIT_OK;
    case 'h':
        fputs(usage, stdout);
        return -1;
    default:
        return cli_error(EXIT_USAGE, "schedule: unknown or incomplete option %s", argv[optind - 1]);
    }
}

static int
parse_opts(struct sched_opts *o, int argc, char **argv)
{
    struct sa_err err = {0};
    int c, code;

    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1)
        if (!keep_as_given(o, c) && (code = other_opt(o, c, argv)) != EXIT_OK)
            return code;
    if (optind != argc)
        return cli_error(EXIT_USAGE, "schedule: unexpected argument %s", argv[optind]);
    if (o->batch)
        return batch_check_opts(o);
    if (schedule_check(o, &err) != SA_OK)
        return cli_error(EXIT_USAGE, "schedule: %s", err.msg);
    return EXIT_OK;
}

static int
schedule(const struct sched_opts *o, const uint8_t *body, size_t body_len)
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
    if (schedule_build_task(t, o, body, body_len, sa_now_ms(), &err) != SA_OK) {
        code = cli_error(cli_exit_for(err.code), "schedule: %s", err.msg);
        goto out;
    }
    if ((code = cli_keyring(&o->cli, &ring)) != EXIT_OK ||
        (code = cli_connect(&o->cli, &n)) != EXIT_OK)
        goto out;
    rc = book_task(n, ring, t, o->id != NULL, id, NULL, &err);
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
    struct sched_opts o = {0};
    char *body = NULL;
    size_t body_len = 0;
    struct sa_err err = {0};
    int code = parse_opts(&o, argc, argv);

    if (code != EXIT_OK)
        return code < 0 ? EXIT_OK : code;
    if (o.batch)
        return batch_run(&o);
    if (o.data_file &&
        schedule_read_file(o.data_file, SA_BODY_MAX, &body, &body_len, &err) != SA_OK)
        return cli_error(cli_exit_for(err.code), "schedule: --data-file: %s", err.msg);
    if (o.data)
        code = schedule(&o, (const uint8_t *)o.data, strlen(o.data));
    else
        code = schedule(&o, (const uint8_t *)body, body_len);
    free(body);
    return code;
}
