/* sa_fail keeps the first failure: the deepest caller names the thing that broke. */
#include <stdarg.h>
#include <stdio.h>

#include "sa_err.h"

static void
record(struct sa_err *err, enum sa_code code, const char *field, const char *fmt, va_list ap)
{
    err->code = code;
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    snprintf(err->field, sizeof(err->field), "%s", field ? field : "");
}

enum sa_code
sa_fail(struct sa_err *err, enum sa_code code, const char *fmt, ...)
{
    va_list ap;

    if (!err || err->code != SA_OK)
        return code;
    va_start(ap, fmt);
    record(err, code, NULL, fmt, ap);
    va_end(ap);
    return code;
}

enum sa_code
sa_fail_field(struct sa_err *err, enum sa_code code, const char *field, const char *fmt, ...)
{
    va_list ap;

    if (!err || err->code != SA_OK)
        return code;
    va_start(ap, fmt);
    record(err, code, field, fmt, ap);
    va_end(ap);
    return code;
}

enum sa_code
sa_err_field(struct sa_err *err, enum sa_code code, const char *field)
{
    if (err && err->code == SA_EINVAL && !err->field[0])
        snprintf(err->field, sizeof(err->field), "%s", field);
    return code;
}

void
sa_err_clear(struct sa_err *err)
{
    if (!err)
        return;
    err->code = SA_OK;
    err->msg[0] = '\0';
    err->field[0] = '\0';
}
