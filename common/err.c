/* sa_fail keeps the first failure: the deepest caller names the thing that broke. */
#include <stdarg.h>
#include <stdio.h>

#include "err.h"

enum sa_code
sa_fail(struct sa_err *err, enum sa_code code, const char *fmt, ...)
{
    va_list ap;

    if (!err || err->code != SA_OK)
        return code;
    err->code = code;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    return code;
}

void
sa_err_clear(struct sa_err *err)
{
    if (!err)
        return;
    err->code = SA_OK;
    err->msg[0] = '\0';
}

const char *
sa_code_name(enum sa_code code)
{
    static const char *names[] = {"OK",     "EINVAL", "ENOMEM",    "ENATS",  "ECRYPTO",
                                  "ERETRY", "EPERM",  "ENOTFOUND", "EEXIST", "ECONFLICT"};

    if ((unsigned)code < sizeof(names) / sizeof(names[0]))
        return names[code];
    return "E?";
}
