/* Key rings: one key per line, the last one newest. Secrets are parsed straight into
 * sodium_malloc'd memory (guarded, never swapped) and wiped when the ring is freed. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "keyring.h"

#define RING_MAX 64

struct sa_keyring {
    size_t n;
    uint8_t kid[RING_MAX][SA_KID_BYTES];
    uint8_t key[RING_MAX][SA_KEY_BYTES];
};

static enum sa_code
ring_new(struct sa_keyring **out, struct sa_err *err)
{
    if (sodium_init() < 0)
        return sa_fail(err, SA_ECRYPTO, "libsodium does not initialise");
    *out = sodium_malloc(sizeof(**out));
    if (!*out)
        return sa_fail(err, SA_ENOMEM, "no memory for a key ring");
    sodium_memzero(*out, sizeof(**out));
    return SA_OK;
}

static enum sa_code
ring_add(struct sa_keyring *r, const uint8_t *kid, const uint8_t *key, struct sa_err *err)
{
    if (r->n == RING_MAX)
        return sa_fail(err, SA_EINVAL, "more than %d keys", RING_MAX);
    if (sa_keyring_find(r, kid))
        return sa_fail(err, SA_EINVAL, "key id %02x%02x%02x%02x appears twice", kid[0], kid[1], kid[2], kid[3]);
    memcpy(r->kid[r->n], kid, SA_KID_BYTES);
    memcpy(r->key[r->n], key, SA_KEY_BYTES);
    r->n++;
    return SA_OK;
}

/* Parses "<8 hex> <64 hex>" (trailing white space allowed). Returns 0 if the line is a key. */
static int
parse_line(char *line, uint8_t *kid, uint8_t *key)
{
    char *sp = strchr(line, ' ');
    size_t klen;

    if (!sp)
        return -1;
    *sp = '\0';
    klen = strcspn(sp + 1, " \t\r\n");
    sp[1 + klen] = '\0';
    if (strlen(line) != 2 * SA_KID_BYTES || klen != 2 * SA_KEY_BYTES)
        return -1;
    if (sodium_hex2bin(kid, SA_KID_BYTES, line, strlen(line), NULL, NULL, NULL) != 0 ||
        sodium_hex2bin(key, SA_KEY_BYTES, sp + 1, klen, NULL, NULL, NULL) != 0)
        return -1;
    return 0;
}

static enum sa_code
check_mode(FILE *f, const char *path, struct sa_err *err)
{
    struct stat st;

    if (fstat(fileno(f), &st) != 0)
        return sa_fail(err, SA_EINVAL, "key file %s: %s", path, strerror(errno));
    if (st.st_mode & 077)
        return sa_fail(err, SA_EINVAL, "key file %s is readable by others (mode %04o); chmod 600 it",
                       path, (unsigned)(st.st_mode & 07777));
    return SA_OK;
}

static enum sa_code
read_lines(struct sa_keyring *r, FILE *f, const char *path, struct sa_err *err)
{
    char *line = sodium_malloc(512);
    uint8_t kid[SA_KID_BYTES], *key = sodium_malloc(SA_KEY_BYTES);
    enum sa_code rc = (line && key) ? SA_OK : sa_fail(err, SA_ENOMEM, "no memory to read keys");

    for (int no = 1; rc == SA_OK && fgets(line, 512, f); no++) {
        size_t skip = strspn(line, " \t");
        if (line[skip] == '#' || line[skip] == '\n' || line[skip] == '\r' || !line[skip])
            continue;
        if (parse_line(line + skip, kid, key) != 0)
            rc = sa_fail(err, SA_EINVAL, "key file %s line %d: want \"<kid 8 hex> <secret 64 hex>\"", path, no);
        else
            rc = ring_add(r, kid, key, err);
    }
    if (rc == SA_OK && r->n == 0)
        rc = sa_fail(err, SA_EINVAL, "key file %s holds no key", path);
    sodium_free(line);
    sodium_free(key);
    return rc;
}

enum sa_code
sa_keyring_load(struct sa_keyring **out, const char *path, struct sa_err *err)
{
    struct sa_keyring *r = NULL;
    FILE *f;
    enum sa_code rc;

    *out = NULL;
    f = fopen(path, "r");
    if (!f)
        return sa_fail(err, SA_EINVAL, "key file %s: %s", path, strerror(errno));
    rc = check_mode(f, path, err);
    if (rc == SA_OK)
        rc = ring_new(&r, err);
    if (rc == SA_OK)
        rc = read_lines(r, f, path, err);
    fclose(f);
    if (rc != SA_OK) {
        sa_keyring_free(r);
        return rc;
    }
    *out = r;
    return SA_OK;
}

enum sa_code
sa_keyring_from_keys(struct sa_keyring **out, const uint8_t (*kids)[SA_KID_BYTES],
                     const uint8_t (*keys)[SA_KEY_BYTES], size_t n, struct sa_err *err)
{
    struct sa_keyring *r = NULL;
    enum sa_code rc = ring_new(&r, err);

    *out = NULL;
    if (rc == SA_OK && n == 0)
        rc = sa_fail(err, SA_EINVAL, "a key ring needs a key");
    for (size_t i = 0; rc == SA_OK && i < n; i++)
        rc = ring_add(r, kids[i], keys[i], err);
    if (rc != SA_OK) {
        sa_keyring_free(r);
        return rc;
    }
    *out = r;
    return SA_OK;
}

static enum sa_code
write_key(int fd, const uint8_t *kid, const char *path, char kid_hex[9], struct sa_err *err)
{
    uint8_t *key = sodium_malloc(SA_KEY_BYTES);
    char *line = sodium_malloc(128), key_hex[2 * SA_KEY_BYTES + 1];
    enum sa_code rc = SA_OK;
    int n;

    if (!key || !line) {
        sodium_free(key);
        sodium_free(line);
        return sa_fail(err, SA_ENOMEM, "no memory for a key");
    }
    randombytes_buf(key, SA_KEY_BYTES);
    sodium_bin2hex(kid_hex, 9, kid, SA_KID_BYTES);
    sodium_bin2hex(key_hex, sizeof(key_hex), key, SA_KEY_BYTES);
    n = snprintf(line, 128, "%s %s\n", kid_hex, key_hex);
    if (write(fd, line, (size_t)n) != n || fsync(fd) != 0)
        rc = sa_fail(err, SA_EINVAL, "key file %s: %s", path, strerror(errno));
    sodium_memzero(key_hex, sizeof(key_hex));
    sodium_free(key);
    sodium_free(line);
    return rc;
}

enum sa_code
sa_keyring_generate(const char *path, int append, char kid_hex[9], struct sa_err *err)
{
    struct sa_keyring *old = NULL;
    uint8_t kid[SA_KID_BYTES];
    enum sa_code rc;
    int fd;

    if (sodium_init() < 0)
        return sa_fail(err, SA_ECRYPTO, "libsodium does not initialise");
    if (append && (rc = sa_keyring_load(&old, path, err)) != SA_OK)
        return rc;
    do
        randombytes_buf(kid, sizeof(kid));
    while (old && sa_keyring_find(old, kid));
    sa_keyring_free(old);
    fd = append ? open(path, O_WRONLY | O_APPEND) : open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0)
        return sa_fail(err, SA_EINVAL, "key file %s: %s%s", path, strerror(errno),
                       errno == EEXIST ? " (use --append to add a key to it)" : "");
    rc = write_key(fd, kid, path, kid_hex, err);
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

size_t
sa_keyring_count(const struct sa_keyring *ring)
{
    return ring->n;
}

void
sa_keyring_free(struct sa_keyring *ring)
{
    if (ring)
        sodium_free(ring); /* wipes the keys */
}
