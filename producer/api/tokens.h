/* Bearer tokens of `sendat serve`. A token is "sat_" and 43 characters of base64url (32 random
 * bytes); the tokens file (SENDAT_API_TOKENS_FILE, mode 0600) keeps one line per token,
 * "v1 ROLE NAME HASH CREATED", with HASH the hex BLAKE2b-256 of the token, never the token. */
#ifndef TOKENS_H
#define TOKENS_H

#include <stddef.h>

#include "err.h"

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

size_t tokens_count(const struct tokens *t);
void tokens_free(struct tokens *t);

#endif
