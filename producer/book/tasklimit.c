/* The producers' side of a task stream's size limit (tasklimit.h). A booking costs no round
 * trip of its own: the stream's info (its config for the limit, its state for the count) is
 * read at most once a second per shard and process, and the tasks admitted since are added
 * to the count read. The memo is per process (one for `sendat schedule`, one shared by the
 * threads of `sendat serve`), behind a lock. Producers that race past the limit within that
 * second land in the headroom; past the headroom the broker itself refuses (discard new), and
 * that refusal is the same SA_EFULL (natserr.c). */
#include <pthread.h>

#include "layout.h"
#include "tasklimit.h"
#include "timeparse.h"

#define READ_EVERY_MS 1000

struct fill { /* what one shard's stream said, and what was admitted since */
    int64_t read_ms;
    int64_t max_msgs, max_bytes; /* the producers' limits; 0: none */
    int64_t msgs, bytes;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct fill fills[SA_SHARDS_MAX];

static int64_t
headroom(int64_t limit, int bytes)
{
    int64_t min = bytes ? TASKLIMIT_BYTES_MIN : TASKLIMIT_MSGS_MIN;

    return limit / 10 > min ? limit / 10 : min;
}

int64_t
tasklimit_hard(int64_t limit, int bytes)
{
    return limit + headroom(limit, bytes);
}

int64_t
tasklimit_of(int64_t hard, int bytes)
{
    int64_t min = bytes ? TASKLIMIT_BYTES_MIN : TASKLIMIT_MSGS_MIN, n;

    if (hard <= min)
        return 0;
    n = hard - min < hard / 11 * 10 ? hard - min : hard / 11 * 10; /* a guess close below */
    while (tasklimit_hard(n + 1, bytes) <= hard) /* the largest n that fits: a step or two */
        n++;
    while (n > 0 && tasklimit_hard(n, bytes) > hard)
        n--;
    return n;
}

/* Under the lock: reads shard's stream into f; a stream that does not answer keeps what
 * was read before (none: no limit) and is asked again in a second. */
static void
read_fill(struct sa_nats *n, int shard, struct fill *f, int64_t now)
{
    char stream[32];
    jsStreamInfo *si = NULL;

    f->read_ms = now;
    sa_layout_stream(stream, sizeof(stream), shard);
    if (js_GetStreamInfo(&si, n->js, stream, NULL, NULL) != NATS_OK)
        return;
    f->max_msgs = tasklimit_of(si->Config->MaxMsgs, 0);
    f->max_bytes = tasklimit_of(si->Config->MaxBytes, 1);
    f->msgs = (int64_t)si->State.Msgs;
    f->bytes = (int64_t)si->State.Bytes;
    jsStreamInfo_Destroy(si);
}

enum sa_code
tasklimit_admit(struct sa_nats *n, int shard, size_t bytes, struct sa_err *err)
{
    char stream[32];
    struct fill *f = &fills[shard];
    int64_t now = sa_now_ms();
    enum sa_code rc = SA_OK;

    sa_layout_stream(stream, sizeof(stream), shard);
    pthread_mutex_lock(&lock);
    if (!f->read_ms || now - f->read_ms >= READ_EVERY_MS || now < f->read_ms)
        read_fill(n, shard, f, now);
    if (f->max_msgs && f->msgs >= f->max_msgs)
        rc = sa_fail(err, SA_EFULL,
                     "the task stream %s is full: it holds %lld tasks, the limit is %lld "
                     "(sendat init --max-tasks); nothing was booked",
                     stream, (long long)f->msgs, (long long)f->max_msgs);
    else if (f->max_bytes && f->bytes + (int64_t)bytes > f->max_bytes)
        rc = sa_fail(err, SA_EFULL,
                     "the task stream %s is full: it holds %lld bytes of tasks, the limit is "
                     "%lld (sendat init --max-task-bytes); nothing was booked",
                     stream, (long long)f->bytes, (long long)f->max_bytes);
    if (rc == SA_OK) {
        f->msgs++;
        f->bytes += (int64_t)bytes;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}
