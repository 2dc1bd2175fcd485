/* What a task would send, for the views that may show it: `sendat dlq show --full`, an admin's
 * GET /v1/dead-letters/{id}, `sendat list --full`; and the escaping of text for a terminal. */
#ifndef CONTENT_H
#define CONTENT_H

#include <jansson.h>

#include "task.h"

/* Sets into e the content of t: "header" (a list of "Name: value") and "data" for a webhook,
 * and "email", "subject", "text", "html" for a mail. */
void content_add(json_t *e, const struct sa_task *t);

#define CONTENT_SHOWN_MAX 4096 /* bytes of one field printed; a longer one says where it is cut */

/* Prints the content content_add set in e, one field a line ("  LABEL field: value"; label
 * may be ""; a header a line each, recipients joined by ", "), each value as it will be sent:
 * UTF-8 as it is, a newline going on indented, and only what would drive a terminal (control
 * bytes, broken UTF-8) as \xNN. A value longer than CONTENT_SHOWN_MAX is cut there, with a
 * line saying how much was shown. */
void content_print(json_t *e, const char *label);

/* s for a terminal: control bytes, non-ASCII bytes, backslash and quote written as \xNN, \\
 * and \" (an escape code in a junk subject is shown, not run). Truncates to cap; returns out. */
const char *content_escape(char *out, size_t cap, const char *s);

#endif
