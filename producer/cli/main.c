/* sendat: the producer CLI. Argument dispatch only; each verb lives in cmd_<verb>.c. */
#include <stdio.h>
#include <string.h>

#include <nats/nats.h>
#include <sodium.h>

#include "cli.h"
#include "sa_version.h"
#include "shutdown.h"

static const char usage[] =
    "usage: sendat <command> [options]\n"
    "\n"
    "commands:\n"
    "  init       create the streams and buckets (idempotent)\n"
    "  keygen     write a new sealing key to a file\n"
    "  schedule   schedule a webhook or an email at a time, a series, or a batch; prints ids\n"
    "  cancel     cancel a task (or --group NAME): cancelled (0), too late (3), unknown id (4)\n"
    "  status     print a task's history\n"
    "  series     pause, resume or list recurring series\n"
    "  dlq        list, show, replay or purge dead letters\n"
    "  preview    the next fires of a cron expression in a time zone\n"
    "  list       the tasks due in a time range (due, id, level, channel, host)\n"
    "  group      list the groups booked (tasks by state), or show one group's tasks\n"
    "  stats      backlog by window and slot, levels being pulled, fleet, dead letters\n"
    "  serve      the HTTP API for applications that book and cancel sends\n"
    "  token      create a bearer token for `sendat serve`\n"
    "\n"
    "`sendat <command> --help` lists a command's options; `sendat --version` the version.\n"
    "Environment: SENDAT_NATS_URL (default " SA_DEFAULT_URL "), SENDAT_KEY_FILE,\n"
    "SENDAT_NATS_CREDS, SENDAT_NATS_NKEY, SENDAT_NATS_USER, SENDAT_NATS_PASSWORD,\n"
    "SENDAT_NATS_TOKEN, SENDAT_NATS_CA, SENDAT_NATS_CERT, SENDAT_NATS_KEY,\n"
    "SENDAT_NATS_INBOX_PREFIX (default _INBOX_sendat_producer), SENDAT_LOG_LEVEL,\n"
    "SENDAT_SERVER_FEATURES (auto, or none: the nats-server 2.9 path on any server).\n";

struct verb {
    const char *name;
    int (*run)(int argc, char **argv);
};

static const struct verb verbs[] = {
    {"init", cmd_init},       {"keygen", cmd_keygen}, {"schedule", cmd_schedule},
    {"cancel", cmd_cancel},   {"status", cmd_status}, {"dlq", cmd_dlq},
    {"preview", cmd_preview}, {"stats", cmd_stats},   {"token", cmd_token},
    {"serve", cmd_serve},     {"series", cmd_series}, {"list", cmd_list},
    {"group", cmd_group},     {NULL, NULL},
};

int
main(int argc, char **argv)
{
    int rc;

    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        puts("sendat " SA_VERSION);
        return EXIT_OK;
    }
    /* libsodium's default generator makes a getrandom system call per draw: a third of the
     * producer's time in a bulk schedule. The internal one is a user-space ChaCha20 generator
     * seeded from the kernel once; this process never forks. */
    randombytes_set_implementation(&randombytes_internal_implementation);
    if (sodium_init() < 0)
        return cli_error(EXIT_FAIL, "libsodium does not initialise");
    for (const struct verb *v = verbs; v->name; v++) {
        if (strcmp(argv[1], v->name) != 0)
            continue;
        nats_Open(-1);
        rc = v->run(argc - 1, argv + 1);
        sa_nats_shutdown(5000); /* nats.c's collector frees the last messages, then ours */
        return rc;
    }
    return cli_error(EXIT_USAGE, "unknown command %s (see sendat --help)", argv[1]);
}
