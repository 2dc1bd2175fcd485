/* sendat cancel ID: races the consumers for the task's claim (invariant 3). Exactly one of
 * cancel and send wins the create-if-absent; a claim left "retrying" between attempts is
 * taken over on its revision. Answers cancelled (0), too late (3) or unknown id (4). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "claim.h"
#include "cli.h"
#include "find.h"
#include "series_status.h"
#include "timeparse.h"

#define SENDING_WAIT_MS 30000 /* how long to wait for a send in progress to finish */

static const char usage[] = "usage: sendat cancel ID [--server URL]\n"
                            "  prints one of: cancelled (exit 0), too late: sent at TIME (exit 3),\n"
                            "  unknown id (exit 4)\n";

static int
answer_cancelled(struct sa_nats *n, const char *id)
{
    char now[40];
    uint64_t rev;

    /* The claim decided; the cancel map lets every consumer drop a held copy at once. */
    sa_time_format(now, sizeof(now), sa_now_ms());
    kvStore_PutString(&rev, n->cancel, id, now);
    puts("cancelled");
    return EXIT_OK;
}

static int
answer_too_late(const struct sa_claim *c)
{
    char at[40];

    sa_time_format(at, sizeof(at), c->at_ms);
    if (c->state == SA_CLAIM_SENT)
        printf("too late: sent at %s\n", at);
    else
        printf("too late: being sent by %s since %s\n", c->consumer, at);
    return EXIT_TOO_LATE;
}

static void
sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

/* One round of the race. Returns an exit code, or CLI_GO_ON to look again. */
static int
try_cancel(struct sa_nats *n, const char *id, int64_t deadline)
{
    struct sa_claim c = {0}, mine = {.state = SA_CLAIM_CANCELLED, .at_ms = sa_now_ms()};
    struct sa_err err = {0};
    natsMsg *msg = NULL;
    enum sa_code rc = sa_claim_get(n->claims, id, &c, &err);

    snprintf(mine.consumer, sizeof(mine.consumer), "sendat cancel");
    if (rc == SA_ENOTFOUND) {
        sa_err_clear(&err);
        rc = find_task(n, id, &msg, &err);
        natsMsg_Destroy(msg);
        if (rc == SA_ENOTFOUND) {
            int series = 0, code = series_cancel(n, id, &series);
            if (!series && code == EXIT_UNKNOWN)
                puts("unknown id");
            return code;
        }
        if (rc == SA_OK)
            rc = sa_claim_create(n->claims, id, &mine, NULL, &err);
        return rc == SA_OK ? answer_cancelled(n, id) : rc == SA_EEXIST ? CLI_GO_ON : cli_error(EXIT_FAIL, "%s", err.msg);
    }
    if (rc != SA_OK)
        return cli_error(EXIT_FAIL, "%s", err.msg);
    switch (c.state) {
    case SA_CLAIM_SENT: return answer_too_late(&c);
    case SA_CLAIM_CANCELLED: return answer_cancelled(n, id);
    case SA_CLAIM_SENDING:
        if (sa_now_ms() > deadline)
            return answer_too_late(&c);
        sleep_ms(50);
        return CLI_GO_ON;
    default: /* retrying or dead: no send is under way, so cancel takes the claim over */
        rc = sa_claim_update(n->claims, id, &mine, c.revision, NULL, &err);
        return rc == SA_OK ? answer_cancelled(n, id) : rc == SA_EEXIST ? CLI_GO_ON : cli_error(EXIT_FAIL, "%s", err.msg);
    }
}

int
cmd_cancel(int argc, char **argv)
{
    struct cli cli = {0};
    struct sa_nats *n = NULL;
    const char *id = NULL;
    int code = cli_parse_id(argc, argv, usage, 0, &cli, &id);
    int64_t deadline;

    if (code != CLI_GO_ON)
        return code;
    if ((code = cli_connect(&cli, &n)) != EXIT_OK)
        return code;
    deadline = sa_now_ms() + SENDING_WAIT_MS;
    for (int round = 0; round < 2000 && (code = try_cancel(n, id, deadline)) == CLI_GO_ON; round++)
        ;
    if (code == CLI_GO_ON)
        code = cli_error(EXIT_FAIL, "cancel: the claim kept changing; try again");
    cli_close(n);
    return code;
}
