/* What a task would send, for the views that may show it: `sendat dlq show --full`, an admin's
 * GET /v1/dead-letters/{id}, `sendat list --full` (cli/show.h prints it); and the escaping of
 * text for a terminal. */
#ifndef CONTENT_H
#define CONTENT_H

#include <jansson.h>

#include "task.h"

/* Sets into e the content of t: "header" (a list of "Name: value") and "data" for a webhook,
 * and "email", "subject", "text", "html" for a mail. */
void content_add(json_t *e, const struct sa_task *t);

/* s for a terminal: control bytes, non-ASCII bytes, backslash and quote written as \xNN, \\
 * and \" (an escape code in a junk subject is shown, not run). Truncates to cap; returns out. */
const char *content_escape(char *out, size_t cap, const char *s);

#endif
