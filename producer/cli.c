/* Shared plumbing of the producer commands: one line per error, exit codes that scripts can
 * rely on, connection and key ring from flags or environment. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "layout.h"

int
cli_parse_id(int argc, char **argv, const char *usage, int with_json, struct cli *c,
             const char **id)
{
    static const struct option opts[] = {{"server", required_argument, NULL, 'S'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int o;

    opterr = 0;
    while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (o == 'S') {
            c->server = optarg;
        } else if (o == 'j' && with_json) {
            c->json = 1;
        } else if (o == 'h') {
            fputs(usage, stdout);
            return EXIT_OK;
        } else {
            return cli_error(EXIT_USAGE, "%s: unknown option %s", argv[0], argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return cli_error(EXIT_USAGE, "%s: give exactly one task id", argv[0]);
    *id = argv[optind];
    if (!sa_layout_id_valid(*id)) {
        puts("unknown id");
        return EXIT_UNKNOWN;
    }
    return CLI_GO_ON;
}

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

const char *
cli_escape(char *out, size_t cap, const char *s)
{
    size_t n = 0;

    for (; *s && n + 5 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\\' || c == '"')
            n += (size_t)snprintf(out + n, cap - n, "\\%c", c);
        else if (c < 0x20 || c >= 0x7F)
            n += (size_t)snprintf(out + n, cap - n, "\\x%02x", c);
        else
            out[n++] = (char)c;
    }
    out[n] = '\0';
    return out;
}
