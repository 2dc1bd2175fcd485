/* The unsealed metadata headers of a task message (Sendat-Scheduled, Sendat-Moves,
 * Sendat-Moved) as a replay could set them: each line is "Name: value". What relay_meta_read
 * gives is in range, and pull.c's moves + 1 cannot overflow. */
#include "fuzz.h"
#include "relay.h"
#include "timeparse.h"

static void
check(natsMsg *msg)
{
    static struct sa_nats n; /* no levels bucket: relay_build makes no mark */
    static struct consumer c = {.n = &n};
    struct relay_meta m;
    natsMsg *out = NULL;

    relay_meta_read(msg, &m);
    if (m.moves < 0 || m.moves > RELAY_MOVES_MAX || m.scheduled_ms < 0 ||
        m.scheduled_ms > SA_TIME_MAX_MS || m.moved_ms < 0 || m.moved_ms > SA_TIME_MAX_MS)
        abort();
    m.moves++;
    if (relay_build(&c, &out, "sendat.task.1.s.2.x", "x", 1, &m, NULL) == SA_OK)
        natsMsg_Destroy(out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int opened;
    char *text = fuzz_text(data, size), *lines[8], *colon;
    natsMsg *msg = NULL;
    int n = fuzz_lines(text, lines, 8);

    if (!opened++)
        nats_Open(-1);
    if (natsMsg_Create(&msg, "sendat.task.1.s.2.x", NULL, "x", 1) != NATS_OK)
        abort();
    for (int i = 0; i < n; i++)
        if ((colon = strchr(lines[i], ':'))) {
            *colon = '\0';
            natsMsgHeader_Add(msg, lines[i], colon + 1 + (colon[1] == ' '));
        }
    check(msg);
    natsMsg_Destroy(msg);
    free(text);
    return 0;
}
