/* What the duplicate-id tests share (test_dupid.c, test_dupid_rebook.c): the fleet, a
 * connection beside it, a booking under a given id, and a consumer's readiness. */
#ifndef DUPID_H
#define DUPID_H

#include <stdint.h>

#include "fixture.h"

extern struct fx F;
extern natsConnection *nc;
extern jsCtx *js;

/* sendat schedule --id ID --at @due --webhook RECEIVER<path> --data DATA: its stdout in out
 * (256 bytes), its stderr in err (4096 bytes); returns its exit code. */
int book_to(const char *id, int64_t due_ms, const char *path, const char *data, char *out,
            char *err);
/* wait_until condition: consumer *(int *)arg answers /readyz with 200. */
int consumer_ready(void *arg);

#endif
