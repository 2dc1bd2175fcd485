/* sendat keygen FILE [--append]: a new sealing key (kid + secret), mode 0600. With --append
 * the key joins an existing ring as the newest: producers seal with it, consumers that have
 * the file open old and new alike (rotation). */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"

static const char usage[] =
    "usage: sendat keygen FILE [--append]\n"
    "  writes a new key to FILE (mode 0600); --append adds it to an existing\n"
    "  key file as the newest key (rotation)\n";

int
cmd_keygen(int argc, char **argv)
{
    static const struct option opts[] = {
        {"append", no_argument, NULL, 'a'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    struct sa_err err = {0};
    char kid[9];
    int append = 0, c;

    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'a')
            append = 1;
        else if (c == 'h')
            return fputs(usage, stdout), EXIT_OK;
        else
            return cli_error(EXIT_USAGE, "keygen: bad option (see sendat keygen --help)");
    }
    if (optind != argc - 1)
        return cli_error(EXIT_USAGE, "keygen: give exactly one FILE");
    if (sa_keyring_generate(argv[optind], append, kid, &err) != SA_OK)
        return cli_error(cli_exit_for(err.code), "%s", err.msg);
    printf("%s\n", kid);
    return EXIT_OK;
}
