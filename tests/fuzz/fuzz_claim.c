/* Claim records as read back from the claims bucket: any bytes through sa_claim_decode; what
 * decodes must encode and decode to the same record. */
#include "claim.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sa_claim c, d;
    char out[2048];
    int n;

    memset(&c, 0, sizeof(c));
    memset(&d, 0, sizeof(d));
    if (sa_claim_decode(&c, (const char *)data, size, NULL) != SA_OK)
        return 0;
    n = sa_claim_encode(&c, out, sizeof(out));
    if (n < 0 || sa_claim_decode(&d, out, (size_t)n, NULL) != SA_OK)
        abort(); /* a decoded claim always encodes and decodes again */
    if (c.state != d.state || c.attempt != d.attempt || c.due_ms != d.due_ms ||
        strcmp(c.error, d.error) != 0)
        abort();
    return 0;
}
