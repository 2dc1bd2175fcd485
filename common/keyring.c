/* Key rings: one key per line, the last one newest. A key file is read with read(2) straight
 * into sodium_malloc'd memory (guarded, locked, never in stdio's buffers), parsed there and
 * wiped; the ring itself is one sodium_malloc'd block that sodium_free wipes. A file that
 * group or others may touch is refused: whoever reads it can forge and read every task. */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "keyring.h"

#define RING_MAX 64          /* keys per ring: retired keys should leave the file */
#define FILE_MAX (64 * 1024) /* a key line is 74 bytes; anything this big is not a key file */
#define KID_HEX (2 * SA_KID_BYTES)
#define KEY_HEX (2 * SA_KEY_BYTES)

struct sa_keyring {
    size_t n;
    uint8_t kid[RING_MAX][SA_KID_BYTES];
    uint8_t key[RING_MAX][SA_KEY_BYTES];
};

static enum sa_code
ring_new(struct sa_keyring **out, struct sa_err *err)
{
    *out = NULL;
    if (sodium_init() < 0)
        return sa_fail(err, SA_ECRYPTO, "libsodium does not initialise");
    *out = sodium_malloc(sizeof(**out));
    if (!*out)
        return sa_fail(err, SA_ENOMEM, "no memory for a key ring");
    sodium_memzero(*out, sizeof(**out));
    return SA_OK;
}

static enum sa_code
ring_add(struct sa_keyring *r, const uint8_t *kid, const uint8_t *key, const char *where,
         struct sa_err *err)
{
    if (sa_keyring_find(r, kid))
        return sa_fail(err, SA_EINVAL, "%skey id %02x%02x%02x%02x appears twice", where, kid[0],
                       kid[1], kid[2], kid[3]);
    if (r->n == RING_MAX)
        return sa_fail(err, SA_EINVAL, "%smore than %d keys; remove retired ones", where, RING_MAX);
    memcpy(r->kid[r->n], kid, SA_KID_BYTES);
    memcpy(r->key[r->n], key, SA_KEY_BYTES);
    r->n++;
    return SA_OK;
}

/* Decodes exactly len hex digits at p into out; 0 if they all are hex. */
static int
unhex(uint8_t *out, size_t out_len, const char *p, size_t len)
{
    size_t bin_len = 0;

    if (len != 2 * out_len)
        return -1;
    return sodium_hex2bin(out, out_len, p, len, NULL, &bin_len, NULL) == 0 && bin_len == out_len
               ? 0
               : -1;
}

static size_t
blank(const char *p)
{
    return strspn(p, " \t\r");
}

/* One line, NUL-terminated: blank, "# comment", or "<kid> <secret> [# comment]". */
static enum sa_code
parse_line(struct sa_keyring *r, char *line, const char *where, uint8_t *key, struct sa_err *err)
{
    uint8_t kid[SA_KID_BYTES];
    char *p = line + blank(line);
    size_t n;

    if (*p == '\0' || *p == '#')
        return SA_OK;
    n = strcspn(p, " \t\r");
    if (unhex(kid, SA_KID_BYTES, p, n) != 0)
        return sa_fail(err, SA_EINVAL,
                       "%skey id must be %d hex digits, then a space and the "
                       "secret",
                       where, KID_HEX);
    p += n;
    if (blank(p) == 0)
        return sa_fail(err, SA_EINVAL, "%swant \"<kid %d hex> <secret %d hex>\"", where, KID_HEX,
                       KEY_HEX);
    p += blank(p);
    n = strcspn(p, " \t\r#");
    if (unhex(key, SA_KEY_BYTES, p, n) != 0)
        return sa_fail(err, SA_EINVAL, "%ssecret must be %d hex digits", where, KEY_HEX);
    p += n;
    p += blank(p);
    if (*p != '\0' && *p != '#')
        return sa_fail(err, SA_EINVAL, "%sunexpected text after the secret", where);
    return ring_add(r, kid, key, where, err);
}

static enum sa_code
parse_text(struct sa_keyring *r, char *text, const char *path, struct sa_err *err)
{
    uint8_t *key = sodium_malloc(SA_KEY_BYTES);
    enum sa_code rc = key ? SA_OK : sa_fail(err, SA_ENOMEM, "no memory to read keys");
    char where[300];
    char *line = text, *nl;

    for (int no = 1; rc == SA_OK && line; no++, line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        snprintf(where, sizeof(where), "key file %.200s line %d: ", path, no);
        rc = parse_line(r, line, where, key, err);
    }
    if (rc == SA_OK && r->n == 0)
        rc = sa_fail(err, SA_EINVAL, "key file %s holds no key", path);
    sodium_free(key); /* wipes */
    return rc;
}

/* The file must be ours alone: a regular file, owned by the user we run as, with no group or
 * other bits. */
static enum sa_code
check_file(int fd, const char *path, struct sa_err *err)
{
    struct stat st;

    if (fstat(fd, &st) != 0)
        return sa_fail(err, SA_EINVAL, "key file %s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return sa_fail(err, SA_EINVAL, "key file %s is not a regular file", path);
    if (st.st_uid != geteuid()) {
        struct passwd *pw = getpwuid(st.st_uid); /* the package's key is the user sendat's */
        return sa_fail(err, SA_EINVAL,
                       "key file %s is owned by uid %u, not by uid %u who reads it: run as its "
                       "owner (sudo -u %s ...)",
                       path, (unsigned)st.st_uid, (unsigned)geteuid(),
                       pw && pw->pw_name ? pw->pw_name : "OWNER");
    }
    if (st.st_mode & 077)
        return sa_fail(err, SA_EINVAL,
                       "key file %s is readable by others (mode %04o); chmod 600 it", path,
                       (unsigned)(st.st_mode & 07777));
    return SA_OK;
}

/* Reads the whole file (at most FILE_MAX bytes) into *text, sodium_malloc'd and NUL-ended. */
static enum sa_code
read_all(int fd, const char *path, char **text, size_t *cap, struct sa_err *err)
{
    size_t len = 0;
    ssize_t got;

    *cap = FILE_MAX + 2;
    *text = sodium_malloc(*cap);
    if (!*text)
        return sa_fail(err, SA_ENOMEM, "no memory to read key file %s", path);
    while (len <= FILE_MAX) {
        got = read(fd, *text + len, *cap - 1 - len);
        if (got == 0)
            break;
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return sa_fail(err, SA_EINVAL, "key file %s: %s", path, strerror(errno));
        len += (size_t)got;
    }
    if (len > FILE_MAX)
        return sa_fail(err, SA_EINVAL, "key file %s is larger than %d bytes", path, FILE_MAX);
    (*text)[len] = '\0';
    if (memchr(*text, '\0', len))
        return sa_fail(err, SA_EINVAL, "key file %s holds a NUL byte", path);
    return SA_OK;
}

/* open(2) of a FIFO or a device can wait for ever (the producer in open, the consumer's main
 * thread on SIGHUP), so open without blocking; check_file then refuses whatever is not a
 * regular file, and regular files read as before once O_NONBLOCK is off again. */
static int
open_nonblock(const char *path, int flags, struct sa_err *err)
{
    int fd = open(path, flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

    if (fd < 0) {
        sa_fail(err, SA_EINVAL, "key file %s: %s", path, strerror(errno));
        return -1;
    }
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
        sa_fail(err, SA_EINVAL, "key file %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

enum sa_code
sa_keyring_load(struct sa_keyring **out, const char *path, struct sa_err *err)
{
    struct sa_keyring *r = NULL;
    char *text = NULL;
    size_t cap = 0;
    enum sa_code rc;
    int fd;

    *out = NULL;
    fd = open_nonblock(path, O_RDONLY, err);
    if (fd < 0)
        return SA_EINVAL;
    if ((rc = check_file(fd, path, err)) != SA_OK || (rc = ring_new(&r, err)) != SA_OK)
        goto out;
    if ((rc = read_all(fd, path, &text, &cap, err)) != SA_OK)
        goto out;
    rc = parse_text(r, text, path, err);
out:
    close(fd);
    sodium_free(text); /* wipes the secrets' hex */
    if (rc != SA_OK)
        sa_keyring_free(r);
    else
        *out = r;
    return rc;
}

enum sa_code
sa_keyring_read_secret(const char *path, char *buf, size_t cap, struct sa_err *err)
{
    enum sa_code rc;
    size_t len = 0;
    ssize_t got = 1;
    int fd = open_nonblock(path, O_RDONLY, err);

    buf[0] = '\0';
    if (fd < 0)
        return SA_EINVAL;
    rc = check_file(fd, path, err);
    while (rc == SA_OK && got != 0 && len + 1 < cap) {
        got = read(fd, buf + len, cap - 1 - len);
        if (got < 0 && errno != EINTR)
            rc = sa_fail(err, SA_EINVAL, "key file %s: %s", path, strerror(errno));
        else if (got > 0)
            len += (size_t)got;
    }
    buf[len] = '\0';
    close(fd);
    return rc;
}

enum sa_code
sa_keyring_from_keys(struct sa_keyring **out, const uint8_t (*kids)[SA_KID_BYTES],
                     const uint8_t (*keys)[SA_KEY_BYTES], size_t n, struct sa_err *err)
{
    struct sa_keyring *r = NULL;
    enum sa_code rc;

    *out = NULL;
    if (n == 0)
        return sa_fail(err, SA_EINVAL, "a key ring needs at least one key");
    if ((rc = ring_new(&r, err)) != SA_OK)
        return rc;
    for (size_t i = 0; rc == SA_OK && i < n; i++)
        rc = ring_add(r, kids[i], keys[i], "", err);
    if (rc != SA_OK) {
        sa_keyring_free(r);
        return rc;
    }
    *out = r;
    return SA_OK;
}

static int
write_all(int fd, const char *buf, size_t len)
{
    ssize_t put;

    while (len > 0) {
        put = write(fd, buf, len);
        if (put < 0 && errno == EINTR)
            continue;
        if (put <= 0)
            return -1;
        buf += put;
        len -= (size_t)put;
    }
    return fsync(fd);
}

/* Writes "<kid> <secret>\n" (after a '\n' if the file does not end in one). The secret and
 * the line are only ever in sodium_malloc'd memory. */
static enum sa_code
write_key(int fd, const uint8_t *kid, const char *path, char kid_hex[9], struct sa_err *err)
{
    const size_t cap = 1 + KID_HEX + 1 + KEY_HEX + 2;
    uint8_t *key = sodium_malloc(SA_KEY_BYTES);
    char *line = sodium_malloc(cap), last = '\n';
    struct stat st;
    enum sa_code rc = SA_OK;
    size_t n = 0;

    if (!key || !line) {
        rc = sa_fail(err, SA_ENOMEM, "no memory for a key");
        goto out;
    }
    if (fstat(fd, &st) == 0 && st.st_size > 0 && pread(fd, &last, 1, st.st_size - 1) != 1)
        last = '\n';
    if (last != '\n')
        line[n++] = '\n';
    randombytes_buf(key, SA_KEY_BYTES);
    sodium_bin2hex(line + n, KID_HEX + 1, kid, SA_KID_BYTES);
    memcpy(kid_hex, line + n, KID_HEX + 1);
    line[n + KID_HEX] = ' ';
    sodium_bin2hex(line + n + KID_HEX + 1, KEY_HEX + 1, key, SA_KEY_BYTES);
    n += KID_HEX + 1 + KEY_HEX;
    line[n++] = '\n';
    if (write_all(fd, line, n) != 0)
        rc = sa_fail(err, SA_EINVAL, "key file %s: %s", path, strerror(errno));
out:
    sodium_free(key);
    sodium_free(line);
    return rc;
}

/* Opens the file to write: created 0600 (whatever the umask), or an existing ring to append. */
static enum sa_code
open_for_key(const char *path, int append, int *fd, struct sa_err *err)
{
    if (append) {
        *fd = open_nonblock(path, O_RDWR | O_APPEND, err); /* read: its last byte */
        return *fd < 0 ? SA_EINVAL : check_file(*fd, path, err);
    }
    *fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (*fd < 0 && errno == EEXIST)
        return sa_fail(err, SA_EINVAL, "key file %s exists; use --append to add a key to it", path);
    if (*fd < 0)
        return sa_fail(err, SA_EINVAL, "key file %s: %s", path, strerror(errno));
    if (fchmod(*fd, 0600) != 0) {
        close(*fd);
        *fd = -1;
        unlink(path);
        return sa_fail(err, SA_EINVAL, "key file %s: chmod 600: %s", path, strerror(errno));
    }
    return SA_OK;
}

enum sa_code
sa_keyring_generate(const char *path, int append, char kid_hex[9], struct sa_err *err)
{
    struct sa_keyring *old = NULL;
    uint8_t kid[SA_KID_BYTES];
    enum sa_code rc;
    int fd = -1;

    if (sodium_init() < 0)
        return sa_fail(err, SA_ECRYPTO, "libsodium does not initialise");
    if (append && access(path, F_OK) != 0 && errno == ENOENT)
        return sa_fail(err, SA_EINVAL,
                       "key file %s does not exist; leave out --append to create it", path);
    if (append && (rc = sa_keyring_load(&old, path, err)) != SA_OK)
        return rc; /* refuse to add to a ring that would not load */
    do
        randombytes_buf(kid, sizeof(kid));
    while (old && sa_keyring_find(old, kid));
    sa_keyring_free(old);
    if ((rc = open_for_key(path, append, &fd, err)) != SA_OK)
        goto out;
    rc = write_key(fd, kid, path, kid_hex, err);
    if (rc != SA_OK && !append)
        unlink(path); /* no half-written ring left behind */
out:
    if (fd >= 0)
        close(fd);
    return rc;
}

void
sa_keyring_newest(const struct sa_keyring *ring, const uint8_t **kid, const uint8_t **key)
{
    *kid = ring->kid[ring->n - 1];
    *key = ring->key[ring->n - 1];
}

const uint8_t *
sa_keyring_find(const struct sa_keyring *ring, const uint8_t kid[SA_KID_BYTES])
{
    for (size_t i = 0; i < ring->n; i++)
        if (!memcmp(ring->kid[i], kid, SA_KID_BYTES))
            return ring->key[i];
    return NULL;
}

int
sa_keyring_gained(const struct sa_keyring *before, const struct sa_keyring *ring)
{
    for (size_t i = 0; ring && i < ring->n; i++)
        if (!before || !sa_keyring_find(before, ring->kid[i]))
            return 1;
    return 0;
}

size_t
sa_keyring_count(const struct sa_keyring *ring)
{
    return ring->n;
}

void
sa_keyring_at(const struct sa_keyring *ring, size_t i, const uint8_t **kid, const uint8_t **key)
{
    *kid = ring->kid[i];
    *key = ring->key[i];
}

void
sa_keyring_free(struct sa_keyring *ring)
{
    sodium_free(ring); /* accepts NULL; wipes the keys before unmapping */
}
