/* Encoded-words are cut at UTF-8 character boundaries so that every word decodes on its own
 * (Korean subjects must arrive intact), and only what needs encoding is encoded. Each word
 * goes on a line of its own (folded with CRLF SP): RFC 2047 limits a line holding encoded
 * words to 76 characters, and a 998-byte subject on one line broke RFC 5322's 998. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "mailhdr.h"
#include "task.h"

/* 39 bytes -> 52 base64 chars -> 64 with =?UTF-8?B??=, so "Reply-To: " and a word fit in 76 */
#define WORD_BYTES 39

static int
plain_ascii(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
            return 0;
    return 1;
}

/* The longest prefix of s of at most max bytes that ends on a character boundary. */
static size_t
utf8_cut(const char *s, size_t len, size_t max)
{
    size_t n = len < max ? len : max;

    while (n > 0 && n < len && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return n ? n : (len < max ? len : max);
}

int
mailhdr_encode(char *out, size_t cap, const char *text)
{
    size_t len = strlen(text), used = 0;

    if (plain_ascii(text))
        return snprintf(out, cap, "%s", text) < (int)cap ? (int)len : -1;
    for (size_t pos = 0; pos < len;) {
        size_t n = utf8_cut(text + pos, len - pos, WORD_BYTES);
        char b64[sodium_base64_ENCODED_LEN(WORD_BYTES, sodium_base64_VARIANT_ORIGINAL)];
        int w;
        sodium_bin2base64(b64, sizeof(b64), (const unsigned char *)text + pos, n, sodium_base64_VARIANT_ORIGINAL);
        w = snprintf(out + used, cap - used, "%s=?UTF-8?B?%s?=", used ? "\r\n " : "", b64);
        if (w < 0 || (size_t)w >= cap - used)
            return -1;
        used += (size_t)w;
        pos += n;
    }
    return (int)used;
}

int
mailhdr_mailbox(char *out, size_t cap, const char *text)
{
    char name[256], addr[SA_ADDRESS_MAX + 1], enc[1024];
    struct sa_err err = {0};

    if (sa_address_parse(text, name, sizeof(name), addr, sizeof(addr), &err) != SA_OK)
        return -1;
    if (!name[0])
        return snprintf(out, cap, "%s", addr) < (int)cap ? (int)strlen(out) : -1;
    if (!plain_ascii(name)) {
        if (mailhdr_encode(enc, sizeof(enc), name) < 0)
            return -1;
        return snprintf(out, cap, "%s <%s>", enc, addr) < (int)cap ? (int)strlen(out) : -1;
    }
    /* specials: a quoted string (no quotes inside: checked) */
    if (strpbrk(name, "()<>@,;:\\\".[]"))
        return snprintf(out, cap, "\"%s\" <%s>", name, addr) < (int)cap ? (int)strlen(out) : -1;
    return snprintf(out, cap, "%s <%s>", name, addr) < (int)cap ? (int)strlen(out) : -1;
}

int
mailhdr_date(char *out, size_t cap, int64_t ms)
{
    static const char *days[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static const char *months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;

    gmtime_r(&secs, &tm);
    return snprintf(out, cap, "%s, %02d %s %04d %02d:%02d:%02d +0000", days[tm.tm_wday], tm.tm_mday,
                    months[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}
