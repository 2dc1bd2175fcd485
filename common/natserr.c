/* A nats.c status turned into an sa_err once, where it is met: the code for the decision, the
 * text for people. Its own file so that what natsconn.c opens at connect (the level marks) can
 * report broker failures without depending on the connection code (no file cycle). */
#include <string.h>

#include "natserr.h"

/* nats.c's last error for people: without its source location ("(conn.c:2088): "), and
 * NULL when it only repeats the status text. */
static const char *
last_error_text(natsStatus s)
{
    const char *last = nats_GetLastError(NULL), *close;

    if (!last)
        return NULL;
    if (last[0] == '(' && (close = strstr(last, "): ")) != NULL)
        last = close + 3;
    return *last && strcmp(last, natsStatus_GetText(s)) ? last : NULL;
}

int
sa_nats_is_full(jsErrCode jerr, const char *text)
{
    return jerr == JSStreamStoreFailedErr && text &&
           (strstr(text, "maximum messages exceeded") || strstr(text, "maximum bytes exceeded"));
}

enum sa_code
sa_nats_fail(struct sa_err *err, natsStatus s, jsErrCode jerr, const char *what)
{
    enum sa_code code = SA_ENATS;
    const char *last = last_error_text(s);

    if (s == NATS_TIMEOUT || s == NATS_CONNECTION_CLOSED || s == NATS_CONNECTION_DISCONNECTED ||
        s == NATS_NO_SERVER || s == NATS_NO_RESPONDERS)
        code = SA_ERETRY;
    if (s == NATS_NOT_FOUND)
        code = SA_ENOTFOUND;
    if (sa_nats_is_full(jerr, last))
        code = SA_EFULL;
    if (jerr)
        return sa_fail(err, code, "%s: %s (JetStream error %d%s%s)", what, natsStatus_GetText(s),
                       (int)jerr, last ? ": " : "", last ? last : "");
    return sa_fail(err, code, "%s: %s%s%s", what, natsStatus_GetText(s), last ? " - " : "",
                   last ? last : "");
}
