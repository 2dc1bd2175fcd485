/* Shared plumbing of the producer commands: one line per error, exit codes that scripts can
 * rely on, connection and key ring from flags or environment. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "claimmac.h"
#include "cli.h"
#include "layout.h"

/* `VERB ID [--server URL] [--json]` into c and *id. */
static enum cli_opts_result
parse_id(int argc, char **argv, const char *usage, int with_json, struct cli *c, const char **id)
{
    const struct cli_opt table[] = {
        CLI_OPT_SERVER(c),
        with_json ? (struct cli_opt)CLI_OPT_JSON(c) : (struct cli_opt){0},
        {0},
    };
    int rest = 0;
    enum cli_opts_result r = cli_opts_parse(argv[0], usage, table, argc, argv, &rest);

    if (r != CLI_OPTS_OK)
        return r;
    if (rest != argc - 1) {
        cli_error(EXIT_USAGE, "%s: give exactly one task id", argv[0]);
        return CLI_OPTS_BAD;
    }
    *id = argv[rest];
    return CLI_OPTS_OK;
}

int
cli_unknown_id(void)
{
    puts("unknown id");
    return EXIT_UNKNOWN;
}

int
cli_id_start(int argc, char **argv, const char *usage, int with_json, struct cli *c,
             const char **id, struct sa_nats **n, int *code)
{
    enum cli_opts_result r = parse_id(argc, argv, usage, with_json, c, id);

    *n = NULL;
    if (r != CLI_OPTS_OK)
        *code = cli_opts_exit(r);
    else if (!sa_layout_id_valid(*id))
        *code = cli_unknown_id();
    else
        *code = cli_connect(c, n);
    return *n != NULL;
}

enum cli_opts_result
cli_bad(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    cli_verror(0, fmt, ap);
    va_end(ap);
    return CLI_OPTS_BAD;
}

int
cli_exit_for(enum sa_code rc)
{
    return rc == SA_EINVAL      ? EXIT_USAGE
           : rc == SA_ECONFLICT ? EXIT_TAKEN
           : rc == SA_EFULL     ? EXIT_FULL
                                : EXIT_FAIL;
}

int
cli_connect(const struct cli *c, struct sa_nats **n)
{
    struct sa_err err = {0};
    enum sa_code rc = sa_nats_connect(n, c->server, "sendat", SA_INBOX_PRODUCER, &err);

    if (rc == SA_OK)
        rc = sa_nats_bind(*n, &err);
    if (rc == SA_OK)
        return EXIT_OK;
    cli_error(EXIT_FAIL, "%s", err.msg);
    cli_close(*n);
    *n = NULL;
    return EXIT_FAIL;
}

void
cli_close(struct sa_nats *n)
{
    char why[300];

    if (sa_nats_refused(n, why, sizeof(why)))
        cli_error(EXIT_FAIL,
                  "refused by the server: %s (this user's permissions do not allow it: "
                  "see deploy/nats/accounts.conf)",
                  why);
    sa_nats_close(n);
}

int
cli_run(enum cli_opts_result r, const struct cli *c, cli_run_fn run, void *opts)
{
    struct sa_nats *n = NULL;
    int code;

    if (r != CLI_OPTS_OK)
        return cli_opts_exit(r);
    if ((code = cli_connect(c, &n)) != EXIT_OK)
        return code;
    code = run(opts, n);
    cli_close(n);
    return code;
}

int
cli_keyring(const struct cli *c, struct sa_keyring **ring)
{
    struct sa_err err = {0};
    const char *path = c->key_file ? c->key_file : getenv("SENDAT_KEY_FILE");

    if (!path || !*path)
        return cli_error(EXIT_USAGE, "no key: give --key-file FILE or set SENDAT_KEY_FILE "
                                     "(make one with `sendat keygen FILE`)");
    if (sa_keyring_load(ring, path, &err) != SA_OK)
        return cli_error(EXIT_USAGE, "%s", err.msg);
    if (sa_claimmac_use(*ring, &err) != SA_OK) { /* claim and cancel records carry its MACs */
        sa_keyring_free(*ring);
        *ring = NULL;
        return cli_error(EXIT_USAGE, "%s", err.msg);
    }
    return EXIT_OK;
}

struct sa_keyring *
cli_keyring_optional(const struct cli *c)
{
    const char *path = c->key_file ? c->key_file : getenv("SENDAT_KEY_FILE");
    struct sa_keyring *ring = NULL;

    if (path && *path && sa_keyring_load(&ring, path, NULL) != SA_OK)
        ring = NULL;
    if (ring && sa_claimmac_use(ring, NULL) != SA_OK)
        sa_claimmac_forget();
    return ring;
}

int
cli_claim_keys(const struct cli *c)
{
    struct sa_keyring *ring = NULL;
    int code = cli_keyring(c, &ring);

    sa_keyring_free(ring); /* claimmac.c keeps subkeys of its own */
    return code;
}
