/* Bearer tokens of `sendat serve`. A token is "sat_" and 43 characters of base64url (32 random
 * bytes); the tokens file (SENDAT_API_TOKENS_FILE, mode 0600) keeps one line per token,
 * "v1 ROLE NAME HASH CREATED", with HASH the hex BLAKE2b-256 of the token, never the token. */
#ifndef TOKENS_H
#define TOKENS_H

#include <stddef.h>

#include "sa_err.h"

enum token_role { TOKEN_NONE = 0, TOKEN_READER, TOKEN_PRODUCER, TOKEN_ADMIN };

#define TOKEN_TEXT_MAX 48 /* "sat_" + 43 + NUL */
#define TOKEN_NAME_MAX 64

struct tokens;

/* The role named by text ("reader", "producer", "admin"), TOKEN_NONE for anything else. */
enum token_role tokens_role(const char *text);
const char *tokens_role_name(enum token_role role);

/* Makes a new token for role, appends its record to path (created 0600 if absent; a file
 * readable by others is refused) and writes the token into out. name may be NULL. */
enum sa_code tokens_create(const char *path, enum token_role role, const char *name,
                           char out[TOKEN_TEXT_MAX], struct sa_err *err) SA_MUST_CHECK;

/* Reads the records of path; SA_EINVAL names a bad line. */
enum sa_code tokens_load(struct tokens **out, const char *path, struct sa_err *err) SA_MUST_CHECK;

/* The role of a presented token (compared in constant time), TOKEN_NONE if it is unknown.
 * name (may be NULL) gets the token's name. */
enum token_role tokens_check(const struct tokens *t, const char *token,
                             char name[TOKEN_NAME_MAX + 1]);

#define TOKEN_ID_LEN 12 /* a token's id: the first hex digits of its hash */

/* What `sendat token list` shows of one record (never the token: the file has only hashes). */
struct token_info {
    enum token_role role;
    char name[TOKEN_NAME_MAX + 1];
    char id[TOKEN_ID_LEN + 1];
    char created[40];
};

/* Record i (< tokens_count) of t into out. */
void tokens_info(const struct tokens *t, size_t i, struct token_info *out);

/* Removes from path the records of which, a token's id (at least 6 of its first hex digits,
 * as `sendat token list` shows) or its name, and writes how many went into removed (0: none
 * matches). A name shared by several tokens is refused (SA_ECONFLICT): revoke those by id. The
 * file is written anew beside it and renamed over it, so a server reads the old or the new. */
enum sa_code tokens_revoke(const char *path, const char *which, size_t *removed,
                           struct sa_err *err) SA_MUST_CHECK;

size_t tokens_count(const struct tokens *t);
void tokens_free(struct tokens *t);

#endif
