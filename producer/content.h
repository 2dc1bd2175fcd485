/* What a task would send, for the views that may show it: `sendat dlq show --full`, an admin's
 * GET /v1/dead-letters/{id}, `sendat list --full`. */
#ifndef CONTENT_H
#define CONTENT_H

#include <jansson.h>

#include "task.h"

/* Sets into e the content of t: "header" (a list of "Name: value") and "data" for a webhook,
 * and "email", "subject", "text", "html" for a mail. */
void content_add(json_t *e, const struct sa_task *t);

/* Prints the content content_add set in e, one field a line ("  LABEL field: value"; label
 * may be ""), escaped so that a body cannot drive the terminal. */
void content_print(json_t *e, const char *label);

#endif
