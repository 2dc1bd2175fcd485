/* Random bytes for what is public once used (task ids, nonces, write ids), drawn from
 * libsodium a block at a time. Each randombytes_buf call of the user-space generator asks
 * the kernel for the process id (to notice a fork): two calls per task were 9 % of the batch
 * producer's CPU. Keys are drawn with randombytes_buf directly, never from here. */
#ifndef SA_RANDOM_H
#define SA_RANDOM_H

#include <stddef.h>

/* Fills buf with n random bytes; any thread. A forked child starts with an empty block, so
 * parent and child never hand out the same bytes. */
void sa_random_buf(void *buf, size_t n);

#endif
