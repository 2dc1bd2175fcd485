/* The sweep record: key "sweep" in the meta bucket, shared by the fleet's consumers (which
 * take turns sweeping the task stream for messages no level pulls) and read by `sendat stats`. */
#ifndef SA_SWEEPREC_H
#define SA_SWEEPREC_H

#include <stddef.h>
#include <stdint.h>

#include "sa_err.h"

#define SA_SWEEP_KEY "sweep"

struct sa_sweep_record {
    uint64_t next_seq;   /* the first stream sequence not yet looked at for good */
    uint64_t found;      /* unread messages found and dead-lettered, all time */
    uint64_t checked;    /* messages looked at, all time (some more than once) */
    int64_t last_run_ms; /* when the last sweep started (0: never) */
    int64_t cursor;      /* the catch-up cursor when it started (0: not known) */
};

/* A record before any sweep: next_seq 1, everything else 0. */
void sa_sweep_record_init(struct sa_sweep_record *r);

/* "next_seq=1 found=0 checked=0 last_run_ms=0 cursor=0" and back (SA_EINVAL if not understood). */
int sa_sweep_record_format(char *out, size_t cap, const struct sa_sweep_record *r);
enum sa_code sa_sweep_record_parse(struct sa_sweep_record *r, const char *text,
                                   struct sa_err *err) SA_MUST_CHECK;

#endif
