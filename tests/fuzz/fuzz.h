/* Shared by the libFuzzer targets: the fuzzer's bytes as NUL-terminated text, cut into lines. */
#ifndef FUZZ_H
#define FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A malloc'd NUL-terminated copy of data (embedded NULs end the text early, as in C strings). */
static inline char *
fuzz_text(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);

    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* Cuts text in place at each '\n' into at most max lines; returns how many. */
static inline int
fuzz_lines(char *text, char **lines, int max)
{
    int n = 0;

    while (text && n < max) {
        char *nl = strchr(text, '\n');

        lines[n++] = text;
        if (nl)
            *nl++ = '\0';
        text = nl;
    }
    return n;
}

#endif
