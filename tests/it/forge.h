/* Forged claim records for the integration tests (test_cancel.c, test_midsend.c). */
#ifndef SA_TEST_FORGE_H
#define SA_TEST_FORGE_H

#include "fixture.h"

/* Writes over id's claim key on f's server as a client allowed to write the claims bucket may:
 * "purge" is refused (the bucket disallows rollups), "delete" leaves a marker, "keyed sent" is an
 * authentic "sent" record (made with the key, as a consumer would), anything else is put as the
 * record's bytes (without the key: junk). */
void forge_claim(struct fx *f, const char *id, const char *what);

#endif
