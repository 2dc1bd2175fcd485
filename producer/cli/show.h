/* Printing for the terminal what read/ gives as JSON. */
#ifndef SHOW_H
#define SHOW_H

#include <jansson.h>

#define SHOW_CONTENT_MAX 4096 /* bytes of one field printed; a longer one says where it is cut */

/* Prints the content content_add (read/content.h) set in e, one field a line ("  LABEL field:
 * value"; label may be ""; a header a line each, recipients joined by ", "), each value as it will
 * be sent: UTF-8 as it is, a newline going on indented, and only what would drive a terminal
 * (control bytes, broken UTF-8) as \xNN. A value longer than SHOW_CONTENT_MAX is cut there, with a
 * line saying how much was shown. */
void show_content(json_t *e, const char *label);

/* One line per event of a history (read/events.h): "TIME EVENT key=value ...", strings quoted with
 * control bytes escaped. */
void show_events(const json_t *events);

#endif
