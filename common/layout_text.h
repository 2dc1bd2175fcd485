/* Text helpers layout.c and layout_ids.c share (layout_text.c; not for other files). */
#ifndef LAYOUT_TEXT_H
#define LAYOUT_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* n as snprintf returned it for a buffer of cap bytes, or -1 if it failed or was cut. */
int sa_layout_fit(int n, size_t cap);
/* The n characters at s as a decimal of 1 to 15 digits into *out: 0, or -1 if they are not. */
int sa_layout_digits(const char *s, size_t n, int64_t *out);

#endif
