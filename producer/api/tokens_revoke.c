/* `sendat token revoke`: the tokens file (tokens.h) written anew without the revoked record. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tokens.h"

#define ID_MIN 6 /* hex digits an id must give at least */

/* Whether a record line is which's: its name, or its hash starting with which's hex digits. */
static int
line_matches(const char *line, const char *which)
{
    char role[16], name[TOKEN_NAME_MAX + 2], hex[72];
    size_t n = strlen(which);

    if (line[0] == '#' || sscanf(line, "v1 %15s %65s %71s", role, name, hex) != 3)
        return 0;
    if (!strcmp(name, which))
        return 1;
    return n >= ID_MIN && strspn(which, "0123456789abcdef") == n && !strncmp(hex, which, n);
}

/* Reads path's lines into *lines (*n of them); the caller frees each and the array. */
static enum sa_code
read_lines(const char *path, char ***lines, size_t *n, struct sa_err *err)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    char *line = NULL;
    size_t cap = 0;
    enum sa_code rc = SA_OK;

    *lines = NULL;
    *n = 0;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return sa_fail(err, SA_EINVAL, "tokens file %s: %s", path, strerror(errno));
    }
    while (getline(&line, &cap, f) >= 0) {
        char **grown = realloc(*lines, (*n + 1) * sizeof(**lines));
        if (!grown) {
            rc = sa_fail(err, SA_ENOMEM, "no memory for the tokens file");
            break;
        }
        *lines = grown;
        (*lines)[(*n)++] = line;
        line = NULL;
        cap = 0;
    }
    free(line);
    fclose(f);
    return rc;
}

/* Writes every line but those of which to path.new (0600) and renames it over path. */
static enum sa_code
write_without(const char *path, char **lines, size_t n, const char *which, struct sa_err *err)
{
    char tmp[4096];
    int fd, failed = 0;
    FILE *f;

    if (snprintf(tmp, sizeof(tmp), "%s.new", path) >= (int)sizeof(tmp))
        return sa_fail(err, SA_EINVAL, "tokens file path too long");
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return sa_fail(err, SA_EINVAL, "%s: %s (a revoke under way, or one that died: remove it)",
                       tmp, strerror(errno));
    f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(tmp);
        return sa_fail(err, SA_ENOMEM, "%s: %s", tmp, strerror(errno));
    }
    for (size_t i = 0; i < n; i++)
        if (!line_matches(lines[i], which))
            failed |= fputs(lines[i], f) < 0;
    failed |= fflush(f) != 0 || fsync(fileno(f)) != 0;
    failed |= fclose(f) != 0;
    if (failed || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return sa_fail(err, SA_EINVAL, "tokens file %s: %s", path, strerror(e));
    }
    return SA_OK;
}

enum sa_code
tokens_revoke(const char *path, const char *which, size_t *removed, struct sa_err *err)
{
    struct tokens *t = NULL;
    char **lines = NULL;
    size_t n = 0, hits = 0;
    enum sa_code rc;

    *removed = 0;
    if ((rc = tokens_load(&t, path, err)) != SA_OK) /* a file of ours, mode 0600, well formed */
        return rc;
    tokens_free(t);
    if ((rc = read_lines(path, &lines, &n, err)) != SA_OK)
        goto out;
    for (size_t i = 0; i < n; i++)
        hits += (size_t)line_matches(lines[i], which);
    if (hits > 1)
        rc = sa_fail(err, SA_ECONFLICT,
                     "%s names %zu tokens: revoke one at a time by its id (sendat token list)",
                     which, hits);
    else if (hits == 1 && (rc = write_without(path, lines, n, which, err)) == SA_OK)
        *removed = 1;
out:
    for (size_t i = 0; i < n; i++)
        free(lines[i]);
    free(lines);
    return rc;
}
