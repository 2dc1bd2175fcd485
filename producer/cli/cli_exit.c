/* The one-line error of every sendat command (cli_exit.h). */
#include <stdio.h>

#include "cli_exit.h"

int
cli_verror(int code, const char *fmt, va_list ap)
{
    fputs("sendat: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    return code;
}

int
cli_error(int code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    cli_verror(code, fmt, ap);
    va_end(ap);
    return code;
}
