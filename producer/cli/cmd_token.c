/* sendat token create: a bearer token for `sendat serve`, printed once; its hash is appended
 * to SENDAT_API_TOKENS_FILE (a running server reads the file again on SIGHUP). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "cli.h"
#include "tokens.h"

static const char usage[] =
    "usage: sendat token create --role reader|producer|admin [--name NAME]\n"
    "  prints a new bearer token for `sendat serve` and appends its hash to\n"
    "  SENDAT_API_TOKENS_FILE (created with mode 0600). reader may read; producer may also\n"
    "  book and cancel; admin may also replay and purge dead letters. The token is shown once.\n";

int
cmd_token(int argc, char **argv)
{
    const char *role = NULL, *name = NULL, *path = getenv("SENDAT_API_TOKENS_FILE");
    const struct cli_opt table[] = {
        {.name = "role", .kind = CLI_OPT_STRING, .to = &role},
        {.name = "name", .kind = CLI_OPT_STRING, .to = &name},
        {0},
    };
    char token[TOKEN_TEXT_MAX];
    struct sa_err err = {0};
    enum cli_opts_result r;
    int rest = 0;

    if (argc < 2 || strcmp(argv[1], "create") != 0) {
        if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
            return fputs(usage, stdout), EXIT_OK;
        return cli_error(EXIT_USAGE, "token: the only verb is create\n%s", usage);
    }
    /* argv[1] is create: its options follow */
    if ((r = cli_opts_parse("token", usage, table, argc - 1, argv + 1, &rest)) != CLI_OPTS_OK)
        return cli_opts_exit(r);
    if (rest != argc - 1)
        return cli_error(EXIT_USAGE, "token create: unexpected argument %s", argv[rest + 1]);
    if (!path || !*path)
        return cli_error(EXIT_USAGE, "token create: set SENDAT_API_TOKENS_FILE to the file "
                                     "`sendat serve` reads its tokens from");
    if (tokens_create(path, tokens_role(role), name, token, &err) != SA_OK)
        return cli_error(EXIT_USAGE, "token create: %s", err.msg);
    puts(token);
    sodium_memzero(token, sizeof(token));
    return EXIT_OK;
}
