/* sendat schedule: builds one task from flags, validates it, seals it and publishes it to its
 * window subject with the task id as Nats-Msg-Id (the same id twice schedules once). Prints
 * the id once JetStream has acknowledged it; bad input exits 2 and publishes nothing. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "publish.h"
#include "schedule.h"
#include "task.h"
#include "timeparse.h"

#define PAST_LIMIT_MS (10 * 60 * 1000LL)              /* further back is refused */
#define FUTURE_LIMIT_MS (10 * 366 * 86400 * 1000LL) /* about ten years ahead */


static const char usage[] =
    "usage: sendat schedule --at TIME --webhook URL [--data STRING | --data-file FILE]\n"
    "                       [--header 'Name: value']... [--id ID] [--not-after TIME]\n"
    "                       [--at-most-once] [--server URL] [--key-file FILE]\n"
    "       sendat schedule --at TIME --email ADDR[,ADDR...] [--cc ADDR,...] [--bcc ADDR,...]\n"
    "                       --subject TEXT (--text TEXT | --text-file FILE) [--html-file FILE]\n"
    "                       [--from 'Name <addr>'] [--reply-to ADDR] [--id ID] [--not-after TIME]\n"
    "  TIME: RFC 3339 with offset or Z (2026-11-22T09:30:00Z), +90s, +10m, +2h, +3d, @UNIX\n"
    "  prints the task id on stdout once JetStream has stored the task.\n"
    "  --data-file - reads the body from stdin; the body limit is 256 KiB.\n"
    "  --id ID (1-64 of A-Z a-z 0-9 _ -): scheduling the same id again schedules it once.\n"
    "  --not-after TIME: dead-letter the task as expired instead of sending it later.\n"
    "  --at-most-once: if a consumer dies mid-send, dead-letter instead of sending again.\n";

static int
add_rcpt(struct sched_opts *o, enum sa_rcpt kind, const char *list)
{
    if (o->n_rcpt[kind] == 64)
        return -1;
    o->rcpt[kind][o->n_rcpt[kind]++] = list;
    return 0;
}

static int
check_email_opts(const struct sched_opts *o)
{
    if (o->webhook)
        return cli_error(EXIT_USAGE, "schedule: give --webhook or --email, not both");
    if (o->data || o->data_file || o->n_headers)
        return cli_error(EXIT_USAGE, "schedule: --data, --data-file and --header are for webhooks");
    if (!o->at)
        return cli_error(EXIT_USAGE, "schedule: --at TIME is required");
    if (!o->subject)
        return cli_error(EXIT_USAGE, "schedule: --subject TEXT is required for email");
    if (!o->text == !o->text_file)
        return cli_error(EXIT_USAGE, "schedule: give --text or --text-file for email");
    return EXIT_OK;
}

static int
parse_opts(struct sched_opts *o, int argc, char **argv)
{
    static const struct option opts[] = {
        {"at", required_argument, NULL, 'a'},        {"webhook", required_argument, NULL, 'w'},
        {"data", required_argument, NULL, 'd'},      {"data-file", required_argument, NULL, 'f'},
        {"header", required_argument, NULL, 'H'},    {"id", required_argument, NULL, 'i'},
        {"not-after", required_argument, NULL, 'n'}, {"at-most-once", no_argument, NULL, 'm'},
        {"server", required_argument, NULL, 'S'},    {"key-file", required_argument, NULL, 'k'},
        {"email", required_argument, NULL, 'E'},     {"cc", required_argument, NULL, 'C'},
        {"bcc", required_argument, NULL, 'B'},       {"subject", required_argument, NULL, 's'},
        {"text", required_argument, NULL, 'x'},      {"text-file", required_argument, NULL, 'X'},
        {"html-file", required_argument, NULL, 'M'}, {"from", required_argument, NULL, 'F'},
        {"reply-to", required_argument, NULL, 'R'},
        {"help", no_argument, NULL, 'h'},            {NULL, 0, NULL, 0}};
    int c;

    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'a': o->at = optarg; break;
        case 'w': o->webhook = optarg; break;
        case 'd': o->data = optarg; break;
        case 'f': o->data_file = optarg; break;
        case 'i': o->id = optarg; break;
        case 'n': o->not_after = optarg; break;
        case 'm': o->at_most_once = 1; break;
        case 'S': o->cli.server = optarg; break;
        case 'k': o->cli.key_file = optarg; break;
        case 'H':
            if (o->n_headers >= SA_HEADERS_MAX)
                return cli_error(EXIT_USAGE, "schedule: more than %d headers", SA_HEADERS_MAX);
            o->headers[o->n_headers++] = optarg;
            break;
        case 'E': case 'C': case 'B':
            if (add_rcpt(o, c == 'E' ? SA_RCPT_TO : c == 'C' ? SA_RCPT_CC : SA_RCPT_BCC, optarg) != 0)
                return cli_error(EXIT_USAGE, "schedule: too many --email/--cc/--bcc flags");
            break;
        case 's': o->subject = optarg; break;
        case 'x': o->text = optarg; break;
        case 'X': o->text_file = optarg; break;
        case 'M': o->html_file = optarg; break;
        case 'F': o->from = optarg; break;
        case 'R': o->reply_to = optarg; break;
        case 'h': fputs(usage, stdout); return -1;
        default:
            return cli_error(EXIT_USAGE, "schedule: unknown or incomplete option %s",
                             argv[optind - 1]);
        }
    }
    if (optind != argc)
        return cli_error(EXIT_USAGE, "schedule: unexpected argument %s", argv[optind]);
    if (o->n_rcpt[0] + o->n_rcpt[1] + o->n_rcpt[2] > 0)
        return check_email_opts(o);
    if (!o->at)
        return cli_error(EXIT_USAGE, "schedule: --at TIME is required");
    if (!o->webhook)
        return cli_error(EXIT_USAGE, "schedule: --webhook URL is required");
    if (o->data && o->data_file)
        return cli_error(EXIT_USAGE, "schedule: give --data or --data-file, not both");
    return EXIT_OK;
}

static enum sa_code
set_times(struct sa_task *t, const struct sched_opts *o, int64_t now, struct sa_err *err)
{
    enum sa_code rc = sa_time_parse(o->at, now, &t->due_ms, err);

    if (rc != SA_OK)
        return rc;
    if (t->due_ms < now - PAST_LIMIT_MS)
        return sa_fail(err, SA_EINVAL, "--at %s is %" PRId64 " s in the past (the limit is %lld s)",
                       o->at, (now - t->due_ms) / 1000, PAST_LIMIT_MS / 1000);
    if (t->due_ms > now + FUTURE_LIMIT_MS)
        return sa_fail(err, SA_EINVAL, "--at %s is more than ten years ahead", o->at);
    if (o->not_after && (rc = sa_time_parse(o->not_after, now, &t->not_after_ms, err)) != SA_OK)
        return rc;
    if (o->not_after && t->not_after_ms < t->due_ms)
        return sa_fail(err, SA_EINVAL, "--not-after %s is before --at", o->not_after);
    t->created_ms = now;
    return SA_OK;
}

static enum sa_code
build_task(struct sa_task *t, const struct sched_opts *o, const uint8_t *body, size_t body_len,
           struct sa_err *err)
{
    int64_t now = sa_now_ms();
    enum sa_code rc = set_times(t, o, now, err);

    if (rc == SA_OK && o->webhook) {
        rc = sa_task_set_url(t, o->webhook, err);
        for (int i = 0; rc == SA_OK && i < o->n_headers; i++)
            rc = sa_task_add_header_line(t, o->headers[i], err);
        if (rc == SA_OK)
            rc = sa_task_set_body(t, body, body_len, err);
    } else if (rc == SA_OK) {
        rc = schedule_build_email(t, o, err);
    }
    if (rc != SA_OK)
        return rc;
    if (o->id && !sa_layout_id_valid(o->id))
        return sa_fail(err, SA_EINVAL, "--id \"%.70s\" must be 1-%d of A-Z a-z 0-9 _ -", o->id, SA_ID_MAX);
    if (o->id)
        snprintf(t->id, sizeof(t->id), "%s", o->id);
    else
        sa_layout_id_new(t->id, sizeof(t->id), t->due_ms);
    t->at_most_once = o->at_most_once;
    return sa_task_validate(t, err);
}

static int
schedule(const struct sched_opts *o, const uint8_t *body, size_t body_len)
{
    struct sa_task *t = NULL;
    struct sa_keyring *ring = NULL;
    struct sa_nats *n = NULL;
    struct sa_err err = {0};
    int code;

    if (sa_task_new(&t, &err) != SA_OK)
        return cli_error(EXIT_FAIL, "%s", err.msg);
    if (build_task(t, o, body, body_len, &err) != SA_OK) {
        code = cli_error(cli_exit_for(err.code), "schedule: %s", err.msg);
        goto out;
    }
    if ((code = cli_keyring(&o->cli, &ring)) != EXIT_OK || (code = cli_connect(&o->cli, &n)) != EXIT_OK)
        goto out;
    if (publish_task(n, ring, t, NULL, &err) != SA_OK) {
        code = cli_error(cli_exit_for(err.code), "schedule: %s", err.msg);
        goto out;
    }
    printf("%s\n", t->id);
out:
    sa_nats_close(n);
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
    if (o.data_file && schedule_read_file(o.data_file, SA_BODY_MAX, &body, &body_len, &err) != SA_OK)
        return cli_error(cli_exit_for(err.code), "schedule: --data-file: %s", err.msg);
    if (o.data)
        code = schedule(&o, (const uint8_t *)o.data, strlen(o.data));
    else
        code = schedule(&o, (const uint8_t *)body, body_len);
    free(body);
    return code;
}
