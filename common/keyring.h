/* Key rings for sealing tasks. A key file holds one key per line, "<kid 8 hex> <secret 64 hex>",
 * '#' comments allowed; the last key is the newest: producers seal with it, consumers open
 * with any. Secrets live in sodium_malloc memory and are wiped on free. */
#ifndef SA_KEYRING_H
#define SA_KEYRING_H

#include <stddef.h>
#include <stdint.h>

#include "sa_err.h"

#define SA_KEY_BYTES 32
#define SA_KID_BYTES 4

struct sa_keyring;

/* Loads a key file. SA_EINVAL names the line that is wrong; a file readable by group or
 * others is refused (mode must be 0600 or stricter), and so is one owned by another user or
 * anything that is not a regular file (a FIFO is refused at once, never waited on). */
enum sa_code sa_keyring_load(struct sa_keyring **out, const char *path,
                             struct sa_err *err) SA_MUST_CHECK;

/* Reads another secret file (the webhook signing secrets) into buf, at most cap - 1 bytes and
 * NUL-terminated, after the same checks as a key file. SA_EINVAL says which check failed. */
enum sa_code sa_keyring_read_secret(const char *path, char *buf, size_t cap,
                                    struct sa_err *err) SA_MUST_CHECK;

/* Builds a ring from raw keys (tests, vectors). kids and keys hold n entries each. */
enum sa_code sa_keyring_from_keys(struct sa_keyring **out, const uint8_t (*kids)[SA_KID_BYTES],
                                  const uint8_t (*keys)[SA_KEY_BYTES], size_t n,
                                  struct sa_err *err) SA_MUST_CHECK;

/* Writes a new random key to path (created 0600, refused if it exists unless append is set,
 * in which case the key is added as the newest). Writes the new kid in hex to kid_hex (9 bytes). */
enum sa_code sa_keyring_generate(const char *path, int append, char kid_hex[9],
                                 struct sa_err *err) SA_MUST_CHECK;

/* The newest key, for sealing. */
void sa_keyring_newest(const struct sa_keyring *ring, const uint8_t **kid, const uint8_t **key);

/* The key with this kid, or NULL. */
const uint8_t *sa_keyring_find(const struct sa_keyring *ring, const uint8_t kid[SA_KID_BYTES]);

size_t sa_keyring_count(const struct sa_keyring *ring);

/* The i-th key (oldest first, i < sa_keyring_count): for deriving subkeys from every key. */
void sa_keyring_at(const struct sa_keyring *ring, size_t i, const uint8_t **kid,
                   const uint8_t **key);

/* 1 if ring holds a key id that before does not (a reload brought a new key); before may be
 * NULL. */
int sa_keyring_gained(const struct sa_keyring *before, const struct sa_keyring *ring);

void sa_keyring_free(struct sa_keyring *ring);

#endif
