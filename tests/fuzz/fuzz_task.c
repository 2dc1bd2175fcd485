/* Task decode: any bytes through the protobuf-c decoder and validation; what decodes must
 * encode and decode again to the same bytes. */
#include "fuzz.h"
#include "task.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sa_task *t = NULL, *u = NULL;
    uint8_t *a = NULL, *b = NULL;
    size_t alen = 0, blen = 0;

    if (sa_task_decode(data, size, &t, NULL) != SA_OK)
        return 0;
    (void)!sa_task_validate(t, NULL);
    if (sa_task_encode(t, &a, &alen, NULL) != SA_OK || sa_task_decode(a, alen, &u, NULL) != SA_OK ||
        sa_task_encode(u, &b, &blen, NULL) != SA_OK)
        abort(); /* a decoded task always encodes and decodes again */
    if (alen != blen || memcmp(a, b, alen) != 0)
        abort();
    free(a);
    free(b);
    sa_task_free(t);
    sa_task_free(u);
    return 0;
}
