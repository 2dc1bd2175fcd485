/* sendat status ID: the task's history (status.c). Text prints one line per event; --json
 * prints the same events for programs. */
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "cli.h"
#include "events.h"
#include "show.h"
#include "status.h"

static const char usage[] = "usage: sendat status ID [--json] [--server URL]\n"
                            "  the due time (and not-after) first, then one line per event in\n"
                            "  time order: scheduled, moved, claimed, sent, failed, replayed,\n"
                            "  cancelled, dead-lettered, and where it waits now; exit 4 for an\n"
                            "  unknown id\n";

int
cmd_status(int argc, char **argv)
{
    struct cli cli = {0};
    struct sa_keyring *ring;
    struct sa_nats *n = NULL;
    json_t *events = NULL;
    const char *id = NULL;
    struct sa_err err = {0};
    enum sa_code rc;
    int code;

    if (!cli_id_start(argc, argv, usage, 1, &cli, &id, &n, &code))
        return code;
    events = json_array();
    ring = cli_keyring_optional(&cli); /* due time, not-after, and the claims' MACs */
    rc = status_collect(n, ring, id, events, &err);
    sa_keyring_free(ring);
    if (rc == SA_ENOTFOUND) {
        puts(cli.json ? "{\"id\":null,\"error\":\"unknown id\"}" : "unknown id");
        code = EXIT_UNKNOWN;
    } else if (rc != SA_OK) {
        code = cli_error(EXIT_FAIL, "status: %s", err.msg);
    } else if (cli.json) {
        json_t *o = json_pack("{s:s, s:O}", "id", id, "events", events);
        json_dumpf(o, stdout, JSON_COMPACT);
        putchar('\n');
        json_decref(o);
    } else {
        show_events(events);
    }
    json_decref(events);
    cli_close(n);
    return code;
}
