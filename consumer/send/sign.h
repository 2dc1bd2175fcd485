/* Standard Webhooks signatures: v1 (HMAC-SHA256 with whsec_ secrets) and v1a (Ed25519 with
 * whsk_ seeds), computed at each attempt over "webhook-id.webhook-timestamp.body". */
#ifndef SIGN_H
#define SIGN_H

#include <stddef.h>
#include <stdint.h>

#include "sa_err.h"

struct signer;

/* Parses a list of secrets separated by spaces or commas: "whsec_<base64>" (HMAC key) and
 * "whsk_<base64 32-byte seed>" (Ed25519). NULL or empty text gives a signer that signs
 * nothing. SA_EINVAL names the bad entry (without printing it). */
enum sa_code signer_new(struct signer **out, const char *secrets, struct sa_err *err) SA_MUST_CHECK;
void signer_free(struct signer *s);

/* Writes the webhook-signature header value ("v1,<b64> v1a,<b64> ...") into out; returns
 * its length, 0 if the signer has no keys, -1 if cap is short. */
int signer_sign(const struct signer *s, char *out, size_t cap, const char *msg_id,
                int64_t ts_seconds, const uint8_t *body, size_t body_len);

#endif
