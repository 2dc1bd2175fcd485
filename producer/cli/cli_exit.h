/* The exit codes of every sendat command and the one-line error on stderr: the base the
 * option parser (cli_opts.h) and the commands' shared start (cli.h) both stand on. */
#ifndef CLI_EXIT_H
#define CLI_EXIT_H

#include <stdarg.h>

#include "sa_err.h"

enum {
    EXIT_OK = 0,
    EXIT_FAIL = 1,     /* the broker or a file failed us */
    EXIT_USAGE = 2,    /* bad flags or bad input: nothing was published */
    EXIT_TOO_LATE = 3, /* cancel: it was sent already */
    EXIT_UNKNOWN = 4,  /* cancel/status: no such task */
    /* schedule: nothing was scheduled, as the id holds another message (TAKEN), or one that is
     * gone, so there is nothing to compare with (UNVERIFIED) */
    EXIT_TAKEN = 5,
    EXIT_UNVERIFIED = 6,
    EXIT_FULL = 7, /* schedule: a task stream holds its limit (init --max-tasks): nothing booked */
};

/* Prints "sendat: <message>" on stderr and returns code. */
int cli_error(int code, const char *fmt, ...) SA_PRINTF(2, 3);

/* The same with the arguments as a va_list. */
int cli_verror(int code, const char *fmt, va_list ap) SA_PRINTF(2, 0);

#endif
