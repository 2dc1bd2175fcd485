/* The tokens file of `sendat serve` (see tokens.h). Only hashes are stored, so the file gives
 * no one a token; tokens carry 256 random bits, so one fast hash is enough. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "timeparse.h"
#include "tokens.h"

#define HASH_BYTES crypto_generichash_BYTES /* 32 */
#define PREFIX "sat_"
#define LINE_MAX_LEN 256

struct record {
    enum token_role role;
    char name[TOKEN_NAME_MAX + 1];
    unsigned char hash[HASH_BYTES];
    char created[40];
};

struct tokens {
    struct record *r;
    size_t n;
};

static const char *const role_names[] = {"", "reader", "producer", "admin"};

enum token_role
tokens_role(const char *text)
{
    for (int i = TOKEN_READER; i <= TOKEN_ADMIN; i++)
        if (text && !strcmp(text, role_names[i]))
            return (enum token_role)i;
    return TOKEN_NONE;
}

const char *
tokens_role_name(enum token_role role)
{
    return role >= TOKEN_READER && role <= TOKEN_ADMIN ? role_names[role] : "none";
}

static int
name_ok(const char *name)
{
    size_t n = strlen(name);
    return n > 0 && n <= TOKEN_NAME_MAX &&
           strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.@-") == n;
}

static void
hash_of(const char *token, unsigned char out[HASH_BYTES])
{
    crypto_generichash(out, HASH_BYTES, (const unsigned char *)token, strlen(token), NULL, 0);
}

/* Opens path for appending, creating it 0600; an existing file must be a regular file of ours
 * that nobody else can read. */
static enum sa_code
open_append(const char *path, FILE **out, struct sa_err *err)
{
    struct stat st;
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);

    *out = NULL;
    if (fd < 0)
        return sa_fail(err, SA_EINVAL, "tokens file %s: %s", path, strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (st.st_mode & 077) ||
        st.st_uid != geteuid()) {
        close(fd);
        return sa_fail(err, SA_EINVAL,
                       "tokens file %s must be a regular file of this user with mode 0600", path);
    }
    *out = fdopen(fd, "a");
    if (!*out) {
        close(fd);
        return sa_fail(err, SA_ENOMEM, "tokens file %s: %s", path, strerror(errno));
    }
    return SA_OK;
}

enum sa_code
tokens_create(const char *path, enum token_role role, const char *name, char out[TOKEN_TEXT_MAX],
              struct sa_err *err)
{
    unsigned char raw[32], hash[HASH_BYTES];
    char hex[HASH_BYTES * 2 + 1], when[40];
    FILE *f = NULL;
    enum sa_code rc;

    if (role == TOKEN_NONE)
        return sa_fail(err, SA_EINVAL, "--role must be reader, producer or admin");
    if (!name)
        name = tokens_role_name(role);
    if (!name_ok(name))
        return sa_fail(err, SA_EINVAL, "--name must be 1 to %d characters of A-Z a-z 0-9 _ . @ -",
                       TOKEN_NAME_MAX);
    if ((rc = open_append(path, &f, err)) != SA_OK)
        return rc;
    randombytes_buf(raw, sizeof(raw));
    memcpy(out, PREFIX, strlen(PREFIX));
    sodium_bin2base64(out + strlen(PREFIX), TOKEN_TEXT_MAX - strlen(PREFIX), raw, sizeof(raw),
                      sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    sodium_memzero(raw, sizeof(raw));
    hash_of(out, hash);
    sodium_bin2hex(hex, sizeof(hex), hash, sizeof(hash));
    sa_time_format(when, sizeof(when), sa_now_ms());
    fprintf(f, "v1 %s %s %s %s\n", tokens_role_name(role), name, hex, when);
    if (fclose(f) != 0)
        return sa_fail(err, SA_EINVAL, "tokens file %s: %s", path, strerror(errno));
    return SA_OK;
}

static enum sa_code
parse_line(char *line, struct record *r, struct sa_err *err, long at)
{
    char role[16], name[TOKEN_NAME_MAX + 2], hex[HASH_BYTES * 2 + 2];
    size_t bin_len = 0;

    r->created[0] = '\0';
    if (sscanf(line, "v1 %15s %65s %65s %39s", role, name, hex, r->created) < 3 ||
        (r->role = tokens_role(role)) == TOKEN_NONE || !name_ok(name) ||
        strlen(hex) != HASH_BYTES * 2 ||
        sodium_hex2bin(r->hash, HASH_BYTES, hex, strlen(hex), NULL, &bin_len, NULL) != 0 ||
        bin_len != HASH_BYTES)
        return sa_fail(err, SA_EINVAL, "tokens file line %ld is not \"v1 ROLE NAME HASH TIME\"",
                       at);
    snprintf(r->name, sizeof(r->name), "%.*s", TOKEN_NAME_MAX, name); /* name_ok: at most that */
    return SA_OK;
}

static enum sa_code
read_records(FILE *f, struct tokens *t, struct sa_err *err)
{
    char line[LINE_MAX_LEN];
    long at = 0;

    while (fgets(line, sizeof(line), f)) {
        struct record *grown;
        at++;
        if (line[0] == '#' || line[strspn(line, " \t\r\n")] == '\0')
            continue;
        grown = realloc(t->r, (t->n + 1) * sizeof(*t->r));
        if (!grown)
            return sa_fail(err, SA_ENOMEM, "no memory for %zu tokens", t->n + 1);
        t->r = grown;
        if (parse_line(line, &t->r[t->n], err, at) != SA_OK)
            return SA_EINVAL;
        t->n++;
    }
    return SA_OK;
}

enum sa_code
tokens_load(struct tokens **out, const char *path, struct sa_err *err)
{
    struct tokens *t = calloc(1, sizeof(*t));
    struct stat st;
    FILE *f = NULL;
    int fd;
    enum sa_code rc;

    *out = NULL;
    if (!t)
        return sa_fail(err, SA_ENOMEM, "no memory for tokens");
    fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        tokens_free(t);
        return sa_fail(err, SA_EINVAL, "tokens file %s: %s (make one with `sendat token create`)",
                       path, strerror(errno));
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (st.st_mode & 077) ||
        st.st_uid != geteuid()) {
        close(fd);
        tokens_free(t);
        return sa_fail(err, SA_EINVAL,
                       "tokens file %s must be a regular file of this user with mode 0600", path);
    }
    f = fdopen(fd, "r");
    rc = f ? read_records(f, t, err) : sa_fail(err, SA_ENOMEM, "tokens file %s", path);
    if (f)
        fclose(f);
    else
        close(fd);
    if (rc != SA_OK) {
        tokens_free(t);
        return rc;
    }
    *out = t;
    return SA_OK;
}

enum token_role
tokens_check(const struct tokens *t, const char *token, char name[TOKEN_NAME_MAX + 1])
{
    unsigned char hash[HASH_BYTES];
    enum token_role found = TOKEN_NONE;

    if (!t || !token || strncmp(token, PREFIX, strlen(PREFIX)) != 0 ||
        strlen(token) >= TOKEN_TEXT_MAX)
        return TOKEN_NONE;
    hash_of(token, hash);
    for (size_t i = 0; i < t->n; i++) /* every record is compared: no early exit to time */
        if (sodium_memcmp(hash, t->r[i].hash, HASH_BYTES) == 0 && found == TOKEN_NONE) {
            found = t->r[i].role;
            if (name)
                snprintf(name, TOKEN_NAME_MAX + 1, "%s", t->r[i].name);
        }
    return found;
}

void
tokens_info(const struct tokens *t, size_t i, struct token_info *out)
{
    const struct record *r = &t->r[i];
    char hex[HASH_BYTES * 2 + 1];

    out->role = r->role;
    snprintf(out->name, sizeof(out->name), "%s", r->name);
    sodium_bin2hex(hex, sizeof(hex), r->hash, sizeof(r->hash));
    snprintf(out->id, sizeof(out->id), "%.*s", TOKEN_ID_LEN, hex);
    snprintf(out->created, sizeof(out->created), "%s", r->created[0] ? r->created : "-");
}

size_t
tokens_count(const struct tokens *t)
{
    return t ? t->n : 0;
}

void
tokens_free(struct tokens *t)
{
    if (!t)
        return;
    free(t->r);
    free(t);
}
