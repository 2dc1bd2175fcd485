/* A per-thread block of libsodium random bytes, handed out front to back and wiped as used. */
#include <pthread.h>
#include <string.h>

#include <sodium.h>

#include "random.h"

#define BLOCK_BYTES 1024

static _Thread_local unsigned char block[BLOCK_BYTES];
static _Thread_local size_t used = BLOCK_BYTES; /* empty until the first draw */
static pthread_once_t fork_hook = PTHREAD_ONCE_INIT;

static void
forget_in_child(void)
{
    used = BLOCK_BYTES; /* the thread that forked: the only one the child has */
}

static void
install_hook(void)
{
    pthread_atfork(NULL, NULL, forget_in_child);
}

void
sa_random_buf(void *buf, size_t n)
{
    unsigned char *out = buf;

    pthread_once(&fork_hook, install_hook);
    while (n > 0) {
        size_t take;

        if (used == BLOCK_BYTES) {
            randombytes_buf(block, sizeof(block));
            used = 0;
        }
        take = n < BLOCK_BYTES - used ? n : BLOCK_BYTES - used;
        memcpy(out, block + used, take);
        sodium_memzero(block + used, take);
        used += take;
        out += take;
        n -= take;
    }
}
