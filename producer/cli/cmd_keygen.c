/* sendat keygen FILE [--append]: a new sealing key (kid + secret), mode 0600, in a folder made
 * (mode 0750) if missing. With --append
 * the key joins an existing ring as the newest: producers seal with it, consumers that have
 * the file open old and new alike (rotation). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

#define FOLDER_MODE 0750 /* the key file's folder: its owner writes, a group may read through */

/* Makes the missing folders above file (mode FOLDER_MODE, not widened by the umask) and says so
 * on stderr. SA_EINVAL saying what to do if one cannot be made. */
static enum sa_code
make_folders(const char *file, struct sa_err *err)
{
    char path[4096];
    struct stat st;

    if (snprintf(path, sizeof(path), "%s", file) >= (int)sizeof(path))
        return sa_fail(err, SA_EINVAL, "key file path is too long");
    for (char *slash = strchr(path + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        if (stat(path, &st) != 0) {
            if (errno != ENOENT || mkdir(path, FOLDER_MODE) != 0)
                return sa_fail(err, SA_EINVAL,
                               "cannot make folder %s for the key file (%s): make it yourself "
                               "(sudo install -d -m 0750 -o $USER %s) or choose another FILE",
                               path, strerror(errno), path);
            chmod(path, FOLDER_MODE);
            fprintf(stderr, "sendat: made folder %s (mode 0750)\n", path);
        } else if (!S_ISDIR(st.st_mode)) {
            return sa_fail(err, SA_EINVAL, "%s is not a folder", path);
        }
        *slash = '/';
    }
    return SA_OK;
}

static const char usage[] =
    "usage: sendat keygen FILE [--append]\n"
    "  writes a new key to FILE (mode 0600), making its missing folders (mode 0750);\n"
    "  --append adds it to an existing\n"
    "  key file as the newest key (rotation)\n";

int
cmd_keygen(int argc, char **argv)
{
    struct sa_err err = {0};
    char kid[9];
    int append = 0, rest = 0;
    const struct cli_opt table[] = {
        {.name = "append", .kind = CLI_OPT_FLAG, .to = &append},
        {0},
    };
    enum cli_opts_result r = cli_opts_parse("keygen", usage, table, argc, argv, &rest);

    if (r != CLI_OPTS_OK)
        return cli_opts_exit(r);
    if (rest != argc - 1)
        return cli_error(EXIT_USAGE, "keygen: give exactly one FILE");
    if ((!append && make_folders(argv[rest], &err) != SA_OK) ||
        sa_keyring_generate(argv[rest], append, kid, &err) != SA_OK)
        return cli_error(cli_exit_for(err.code), "%s", err.msg);
    printf("%s\n", kid);
    return EXIT_OK;
}
