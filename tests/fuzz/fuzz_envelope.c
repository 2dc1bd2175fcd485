/* Envelope open, two ways chosen by the first byte. Even: the rest is an envelope as received,
 * opened under the id "1795340100000-fuzz" with a fixed test key (version, kid, length and tag
 * checks; the seeds are envelopes sealed with that key). Odd: the rest is a task's protobuf,
 * sealed with that key and opened again, so sa_task_open's decode, id check and validation
 * see fuzzed plaintexts. */
#include <sodium.h>

#include "envelope.h"
#include "fuzz.h"
#include "task.h"

#define ID "1795340100000-fuzz"

static struct sa_keyring *
ring(void)
{
    static struct sa_keyring *r;
    static const uint8_t kid[1][SA_KID_BYTES] = {{0xf0, 0x22, 0x00, 0x01}};
    static const uint8_t key[1][SA_KEY_BYTES] = {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}};

    if (!r && sa_keyring_from_keys(&r, kid, key, 1, NULL) != SA_OK)
        abort();
    return r;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sa_task *t = NULL;
    uint8_t *env = NULL;
    size_t len = 0;

    if (size == 0)
        return 0;
    if (data[0] % 2 == 0) {
        if (sa_task_open(ring(), ID, data + 1, size - 1, &t, NULL) == SA_OK &&
            strcmp(t->id, ID) != 0)
            abort(); /* an opened task is always the one its subject names */
        sa_task_free(t);
        return 0;
    }
    if (sa_envelope_seal(ring(), ID, data + 1, size - 1, &env, &len, NULL) != SA_OK)
        abort();
    if (sa_task_open(ring(), ID, env, len, &t, NULL) == SA_OK && sa_task_validate(t, NULL) != SA_OK)
        abort(); /* sa_task_open hands out validated tasks only */
    sa_task_free(t);
    free(env);
    return 0;
}
