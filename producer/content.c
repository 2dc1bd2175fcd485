/* A task's content as JSON (see content.h). Only a holder of the key sees it: the broker never
 * does. */
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "cli.h"
#include "content.h"

void
content_add(json_t *e, const struct sa_task *t)
{
    json_t *headers = json_array(), *to = json_array(), *data;

    for (size_t i = 0; i < t->n_headers; i++)
        json_array_append_new(headers,
                              json_sprintf("%s: %s", t->headers[i].name, t->headers[i].value));
    json_object_set_new(e, "header", headers);
    data = json_stringn((const char *)t->body, t->body_len);
    json_object_set_new(e, "data", data ? data : json_null());
    for (size_t i = 0; i < t->n_rcpt[SA_RCPT_TO]; i++)
        json_array_append_new(to, json_string(t->rcpt[SA_RCPT_TO][i]));
    if (t->channel == SA_CHANNEL_EMAIL) {
        json_object_set_new(e, "email", to);
        json_object_set_new(e, "subject", json_string(t->subject ? t->subject : ""));
        json_object_set_new(e, "text", json_string(t->text ? t->text : ""));
        json_object_set_new(e, "html", json_string(t->html ? t->html : ""));
    } else {
        json_decref(to);
    }
}

void
content_print(json_t *e, const char *label)
{
    static const char *const keys[] = {"header", "data", "email", "subject", "text", "html", NULL};
    char text[1024];

    for (int i = 0; keys[i]; i++) {
        json_t *v = json_object_get(e, keys[i]);
        char *dump = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
        if (dump)
            printf("  %s%s%s: %s\n", label, *label ? " " : "", keys[i],
                   cli_escape(text, sizeof(text), dump));
        free(dump);
    }
}
