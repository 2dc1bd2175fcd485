/* sendat token create | list | revoke: the bearer tokens of `sendat serve` in
 * SENDAT_API_TOKENS_FILE. create prints a new token once and appends its hash; list shows each
 * record's id, role, name and creation time (never a token: the file has only hashes); revoke
 * drops one record. A running server reads the file again once it changed, at its next request
 * with a token. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "cli.h"
#include "tokens.h"

static const char usage[] =
    "usage: sendat token create --role reader|producer|admin [--name NAME]\n"
    "       sendat token list\n"
    "       sendat token revoke ID|NAME\n"
    "  create prints a new bearer token for `sendat serve` and appends its hash to\n"
    "  SENDAT_API_TOKENS_FILE (created with mode 0600). reader may read; producer may also\n"
    "  book and cancel; admin may also replay and purge dead letters. The token is shown once.\n"
    "  list shows each token's id (its hash's first digits), role, name and creation time.\n"
    "  revoke removes the token with that id (6 or more of its digits) or name; a name several\n"
    "  tokens share is refused (exit 2), an unknown one is exit 4. A running `sendat serve`\n"
    "  reads the file again once it changed: a revoked token gets 401 from its next request.\n";

static int
create(const char *path, int argc, char **argv)
{
    const char *role = NULL, *name = NULL;
    const struct cli_opt table[] = {
        {.name = "role", .kind = CLI_OPT_STRING, .to = &role},
        {.name = "name", .kind = CLI_OPT_STRING, .to = &name},
        {0},
    };
    char token[TOKEN_TEXT_MAX];
    struct sa_err err = {0};
    enum cli_opts_result r;
    int rest = 0;

    if ((r = cli_opts_parse("token", usage, table, argc, argv, &rest)) != CLI_OPTS_OK)
        return cli_opts_exit(r);
    if (rest != argc)
        return cli_error(EXIT_USAGE, "token create: unexpected argument %s", argv[rest]);
    if (tokens_create(path, tokens_role(role), name, token, &err) != SA_OK)
        return cli_error(EXIT_USAGE, "token create: %s", err.msg);
    puts(token);
    sodium_memzero(token, sizeof(token));
    return EXIT_OK;
}

static int
list(const char *path, int argc)
{
    struct tokens *t = NULL;
    struct token_info info;
    struct sa_err err = {0};

    if (argc != 1)
        return cli_error(EXIT_USAGE, "token list: takes no arguments\n%s", usage);
    if (tokens_load(&t, path, &err) != SA_OK)
        return cli_error(EXIT_USAGE, "token list: %s", err.msg);
    printf("%-*s  %-8s  %-24s  %s\n", TOKEN_ID_LEN, "ID", "ROLE", "NAME", "CREATED");
    for (size_t i = 0; i < tokens_count(t); i++) {
        tokens_info(t, i, &info);
        printf("%-*s  %-8s  %-24s  %s\n", TOKEN_ID_LEN, info.id, tokens_role_name(info.role),
               info.name, info.created);
    }
    tokens_free(t);
    return EXIT_OK;
}

static int
revoke(const char *path, int argc, char **argv)
{
    struct sa_err err = {0};
    size_t removed = 0;

    if (argc != 2 || !*argv[1])
        return cli_error(EXIT_USAGE, "token revoke: give one token id or name\n%s", usage);
    if (tokens_revoke(path, argv[1], &removed, &err) != SA_OK)
        return cli_error(err.code == SA_ENOMEM ? EXIT_FAIL : EXIT_USAGE, "token revoke: %s",
                         err.msg);
    if (!removed)
        return cli_error(EXIT_UNKNOWN, "token revoke: %s: unknown token (see sendat token list)",
                         argv[1]);
    printf("revoked %s\n", argv[1]);
    return EXIT_OK;
}

int
cmd_token(int argc, char **argv)
{
    const char *path = getenv("SENDAT_API_TOKENS_FILE");
    const char *verb = argc >= 2 ? argv[1] : "";

    if (!strcmp(verb, "--help") || !strcmp(verb, "-h"))
        return fputs(usage, stdout), EXIT_OK;
    if (strcmp(verb, "create") && strcmp(verb, "list") && strcmp(verb, "revoke"))
        return cli_error(EXIT_USAGE, "token: the verbs are create, list and revoke\n%s", usage);
    if (!path || !*path)
        return cli_error(EXIT_USAGE,
                         "token %s: set SENDAT_API_TOKENS_FILE to the file "
                         "`sendat serve` reads its tokens from",
                         verb);
    if (!strcmp(verb, "create"))
        return create(path, argc - 1, argv + 1);
    if (!strcmp(verb, "list"))
        return list(path, argc - 1);
    return revoke(path, argc - 1, argv + 1);
}
