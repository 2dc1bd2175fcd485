/* sendat token create: a bearer token for `sendat serve`, printed once; its hash is appended
 * to SENDAT_API_TOKENS_FILE (a running server reads the file again on SIGHUP). */
#include <getopt.h>
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
    static const struct option opts[] = {{"role", required_argument, NULL, 'r'},
                                         {"name", required_argument, NULL, 'n'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *role = NULL, *name = NULL, *path = getenv("SENDAT_API_TOKENS_FILE");
    char token[TOKEN_TEXT_MAX];
    struct sa_err err = {0};
    int c;

    if (argc < 2 || strcmp(argv[1], "create") != 0) {
        if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
            return fputs(usage, stdout), EXIT_OK;
        return cli_error(EXIT_USAGE, "token: the only verb is create\n%s", usage);
    }
    opterr = 0;
    optind = 2;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'r')
            role = optarg;
        else if (c == 'n')
            name = optarg;
        else if (c == 'h')
            return fputs(usage, stdout), EXIT_OK;
        else
            return cli_error(EXIT_USAGE, "token: unknown option %s", argv[optind - 1]);
    }
    if (optind != argc)
        return cli_error(EXIT_USAGE, "token create: unexpected argument %s", argv[optind]);
    if (!path || !*path)
        return cli_error(EXIT_USAGE, "token create: set SENDAT_API_TOKENS_FILE to the file "
                                     "`sendat serve` reads its tokens from");
    if (tokens_create(path, tokens_role(role), name, token, &err) != SA_OK)
        return cli_error(EXIT_USAGE, "token create: %s", err.msg);
    puts(token);
    sodium_memzero(token, sizeof(token));
    return EXIT_OK;
}
