/* Text helpers of the layout: layout_text.h's, and sa_layout_i64 (layout.h). */
#include <string.h>

#include "layout.h"
#include "layout_text.h"

int
sa_layout_fit(int n, size_t cap)
{
    return (n < 0 || (size_t)n >= cap) ? -1 : n;
}

int
sa_layout_digits(const char *s, size_t n, int64_t *out)
{
    int64_t v = 0;

    if (n == 0 || n > 15)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

size_t
sa_layout_i64(char out[SA_I64_TEXT], int64_t v)
{
    char digits[SA_I64_TEXT];
    size_t at = sizeof(digits) - 1;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

    digits[at] = '\0';
    do {
        digits[--at] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        digits[--at] = '-';
    memcpy(out, digits + at, sizeof(digits) - at);
    return sizeof(digits) - 1 - at;
}
