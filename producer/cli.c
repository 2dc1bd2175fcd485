/* Shared plumbing of the producer commands: one line per error, exit codes that scripts can
 * rely on, connection and key ring from flags or environment. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

int
cli_error(int code, const char *fmt, ...)
{
    va_list ap;

    fputs("sendat: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return code;
}

int
cli_exit_for(enum sa_code rc)
{
    return rc == SA_EINVAL ? EXIT_USAGE : rc == SA_ECONFLICT ? EXIT_TAKEN : EXIT_FAIL;
}

int
cli_connect(const struct cli *c, struct sa_nats **n)
{
    struct sa_err err = {0};
    enum sa_code rc = sa_nats_connect(n, c->server, "sendat", &err);

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
cli_keyring(const struct cli *c, struct sa_keyring **ring)
{
    struct sa_err err = {0};
    const char *path = c->key_file ? c->key_file : getenv("SENDAT_KEY_FILE");

    if (!path || !*path)
        return cli_error(EXIT_USAGE, "no key: give --key-file FILE or set SENDAT_KEY_FILE "
                                     "(make one with `sendat keygen FILE`)");
    if (sa_keyring_load(ring, path, &err) != SA_OK)
        return cli_error(EXIT_USAGE, "%s", err.msg);
    return EXIT_OK;
}
