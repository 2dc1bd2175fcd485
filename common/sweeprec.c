/* The sweep record's text form. Plain key=value like the layout record, so an operator can
 * read it with `nats kv get sendat_meta sweep`. */
#include <inttypes.h>
#include <stdio.h>

#include "sweeprec.h"

void
sa_sweep_record_init(struct sa_sweep_record *r)
{
    *r = (struct sa_sweep_record){.next_seq = 1};
}

int
sa_sweep_record_format(char *out, size_t cap, const struct sa_sweep_record *r)
{
    return snprintf(out, cap,
                    "next_seq=%" PRIu64 " found=%" PRIu64 " checked=%" PRIu64
                    " last_run_ms=%" PRId64 " cursor=%" PRId64,
                    r->next_seq, r->found, r->checked, r->last_run_ms, r->cursor);
}

enum sa_code
sa_sweep_record_parse(struct sa_sweep_record *r, const char *text, struct sa_err *err)
{
    unsigned long long next, found, checked;
    long long last, cursor;

    if (sscanf(text, "next_seq=%llu found=%llu checked=%llu last_run_ms=%lld cursor=%lld", &next,
               &found, &checked, &last, &cursor) != 5 ||
        next == 0)
        return sa_fail(err, SA_EINVAL, "sweep record \"%.80s\" is not understood", text);
    *r = (struct sa_sweep_record){next, found, checked, last, cursor};
    return SA_OK;
}
