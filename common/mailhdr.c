/* Header fields are built token by token, and a fold (CRLF before the whitespace) goes in
 * wherever the next token would pass 78 characters, so 400 recipients or a 300-character Korean
 * subject stay within SMTP's 998. Encoded-words are cut at UTF-8 character boundaries so
 * that every word decodes on its own (Korean subjects must arrive intact). The address check
 * lives here too: the header builder and a task's email checks (task_email.c) share it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "mailhdr.h"

static int
addr_char_ok(unsigned char c)
{
    return c > 32 && c < 127 && !strchr("<>()[]\\,;:\"@", c);
}

static int
domain_ok(const char *d)
{
    size_t label = 0;

    if (!strchr(d, '.'))
        return 0;
    for (const char *p = d; *p; p++) {
        int alnum =
            (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9');
        if (*p == '.' && (label == 0 || p[-1] == '-'))
            return 0; /* empty label, or one ending in a hyphen */
        if (*p == '-' && label == 0)
            return 0;
        if (!alnum && *p != '.' && *p != '-')
            return 0;
        label = *p == '.' ? 0 : label + 1;
        if (label > 63)
            return 0;
    }
    return label > 0 && d[strlen(d) - 1] != '-';
}

/* A practical addr-spec check: a dot-atom local part of at most 64 printable ASCII characters
 * (one "@" in all), and a dotted domain of letters, digits and hyphens (a bracketed literal
 * is refused: nobody schedules to those). Messages never quote the address (invariant: no
 * recipient in a reason or a log). */
static enum sa_code
check_bare(const char *a, struct sa_err *err)
{
    const char *at = strchr(a, '@');
    size_t n = strlen(a), local = at ? (size_t)(at - a) : 0;

    if (n == 0 || n > SA_ADDRESS_MAX || !at || local == 0 || !at[1])
        return sa_fail(err, SA_EINVAL, "not an email address (want local@domain)");
    if (strchr(at + 1, '@'))
        return sa_fail(err, SA_EINVAL, "more than one @");
    if (local > 64)
        return sa_fail(err, SA_EINVAL, "the part before @ is longer than 64 characters");
    for (const char *p = a; p < at; p++)
        if (!addr_char_ok((unsigned char)*p))
            return sa_fail(err, SA_EINVAL, "a character not allowed before @");
    if (a[0] == '.' || at[-1] == '.' || memmem(a, local, "..", 2))
        return sa_fail(err, SA_EINVAL, "a misplaced dot before @");
    if (!domain_ok(at + 1))
        return sa_fail(err, SA_EINVAL, "not a valid domain after @");
    return SA_OK;
}

enum sa_code
sa_address_parse(const char *text, char *name, size_t name_cap, char *addr, size_t addr_cap,
                 struct sa_err *err)
{
    const char *lt = strchr(text, '<'), *gt = lt ? strchr(lt, '>') : NULL;
    size_t nlen;

    if (strpbrk(text, "\r\n"))
        return sa_fail(err, SA_EINVAL, "CR or LF in an address");
    if (!lt) {
        snprintf(name, name_cap, "%s", "");
        if (strlen(text) >= addr_cap)
            return sa_fail(err, SA_EINVAL, "address is longer than %d", SA_ADDRESS_MAX);
        snprintf(addr, addr_cap, "%s", text);
        return check_bare(addr, err);
    }
    if (!gt || gt[1] != '\0' || (size_t)(gt - lt - 1) >= addr_cap)
        return sa_fail(err, SA_EINVAL, "not \"Name <address>\"");
    snprintf(addr, addr_cap, "%.*s", (int)(gt - lt - 1), lt + 1);
    for (nlen = (size_t)(lt - text); nlen > 0 && text[nlen - 1] == ' '; nlen--)
        ;
    if (nlen >= name_cap || memchr(text, '"', nlen))
        return sa_fail(err, SA_EINVAL, "display name too long or quoted");
    snprintf(name, name_cap, "%.*s", (int)nlen, text);
    return check_bare(addr, err);
}

#define LINE_SOFT 78  /* RFC 5322 2.1.1: a line SHOULD be at most 78 characters */
#define LINE_HARD 998 /* and MUST be at most 998 */
#define WORD_BYTES 45 /* 45 bytes -> 60 base64 chars -> 72 with =?UTF-8?B??= (RFC 2047: 75) */
#define WORD_MIN 12   /* a shorter word is not worth it: fold first */
#define WORD_FRAME 12 /* strlen("=?UTF-8?B?") + strlen("?=") */

struct fold {
    const char *name; /* the field, for messages */
    char *p;
    size_t len, cap;
    size_t line;   /* characters on the current line */
    size_t tokens; /* tokens on the current line */
};

static int
plain_ascii(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
            return 0;
    return 1;
}

/* Text that would not read back as itself unencoded: controls, non-ASCII, or "=?", which a
 * reader would take for the start of an encoded-word. */
static int
needs_encoding(const char *s)
{
    return !plain_ascii(s) || strstr(s, "=?") != NULL;
}

static size_t
longest_word(const char *s)
{
    size_t best = 0, n;

    for (; *s; s += n + (s[n] == ' ')) {
        n = strcspn(s, " ");
        if (n > best)
            best = n;
    }
    return best;
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

static enum sa_code
put_raw(struct fold *f, const char *s, size_t n, struct sa_err *err)
{
    size_t cap = f->cap ? f->cap : 256;
    char *q;

    if (f->len + n + 1 > SA_MAILHDR_MAX)
        return sa_fail(err, SA_EINVAL, "the %s header would be longer than %d bytes", f->name,
                       SA_MAILHDR_MAX);
    while (cap < f->len + n + 1)
        cap *= 2;
    if (cap != f->cap) {
        if (!(q = realloc(f->p, cap)))
            return sa_fail(err, SA_ENOMEM, "no memory for the %s header", f->name);
        f->p = q;
        f->cap = cap;
    }
    memcpy(f->p + f->len, s, n);
    f->len += n;
    f->p[f->len] = '\0';
    return SA_OK;
}

/* Whitespace, then tok; the whitespace becomes a fold when tok would pass LINE_SOFT and the
 * line already has a token (a line of whitespace alone is not allowed). */
static enum sa_code
put_token(struct fold *f, const char *tok, size_t n, struct sa_err *err)
{
    int fold = f->tokens && n && f->line + 1 + n > LINE_SOFT;
    enum sa_code rc = put_raw(f, fold ? "\r\n " : " ", fold ? 3 : 1, err);

    if (rc == SA_OK)
        rc = put_raw(f, tok, n, err);
    f->line = (fold ? 0 : f->line) + 1 + n;
    f->tokens = (fold ? 0 : f->tokens) + 1;
    return rc;
}

/* Printable ASCII cut at its spaces; each space is kept, as the fold's whitespace. */
static enum sa_code
put_words(struct fold *f, const char *s, struct sa_err *err)
{
    enum sa_code rc = SA_OK;
    size_t n;

    for (;; s += n + 1) {
        n = strcspn(s, " ");
        if ((rc = put_token(f, s, n, err)) != SA_OK || !s[n])
            return rc;
    }
}

/* Encoded-words sized to the room left on the line, so the first one fits beside the name. */
static enum sa_code
put_encoded(struct fold *f, const char *text, struct sa_err *err)
{
    size_t len = strlen(text);
    enum sa_code rc = SA_OK;

    for (size_t pos = 0; rc == SA_OK && pos < len;) {
        char b64[sodium_base64_ENCODED_LEN(WORD_BYTES, sodium_base64_VARIANT_ORIGINAL)];
        char word[sizeof(b64) + WORD_FRAME];
        size_t used = f->line + 1 + WORD_FRAME, room, n;
        int w;

        room = used + WORD_MIN * 4 / 3 <= LINE_SOFT ? LINE_SOFT - used : LINE_SOFT - 1 - WORD_FRAME;
        room = room / 4 * 3 < WORD_BYTES ? room / 4 * 3 : WORD_BYTES;
        n = utf8_cut(text + pos, len - pos, room);
        sodium_bin2base64(b64, sizeof(b64), (const unsigned char *)text + pos, n,
                          sodium_base64_VARIANT_ORIGINAL);
        w = snprintf(word, sizeof(word), "=?UTF-8?B?%s?=", b64);
        rc = put_token(f, word, (size_t)w, err);
        pos += n;
    }
    return rc;
}

/* A quoted-string: backslash and quote escaped, so a name ending in "\" stays closed. */
static enum sa_code
put_quoted(struct fold *f, const char *name, struct sa_err *err)
{
    char q[2 * 256 + 3];
    size_t n = 0;

    q[n++] = '"';
    for (; *name && n < sizeof(q) - 3; name++) {
        if (*name == '\\' || *name == '"')
            q[n++] = '\\';
        q[n++] = *name;
    }
    q[n++] = '"';
    return put_token(f, q, n, err);
}

static enum sa_code
put_mailbox(struct fold *f, const char *entry, size_t i, int last, struct sa_err *err)
{
    char name[256], addr[SA_ADDRESS_MAX + 4];
    enum sa_code rc = SA_OK;
    size_t n;

    if (sa_address_parse(entry, name, sizeof(name), addr + 1, SA_ADDRESS_MAX + 1, NULL) != SA_OK)
        return sa_fail(err, SA_EINVAL, "%s: entry %zu is not an address", f->name, i + 1);
    if (name[0] && needs_encoding(name))
        rc = put_encoded(f, name, err);
    else if (name[0] && strpbrk(name, "()<>@,;:\\\".[]"))
        rc = put_quoted(f, name, err);
    else if (name[0])
        rc = put_words(f, name, err);
    n = strlen(addr + 1);
    if (name[0]) { /* "<addr>" */
        addr[0] = '<';
        addr[++n] = '>';
        n++;
    } else {
        memmove(addr, addr + 1, n);
    }
    if (!last)
        addr[n++] = ',';
    return rc == SA_OK ? put_token(f, addr, n, err) : rc;
}

static enum sa_code
begin(struct fold *f, const char *name, struct sa_err *err)
{
    enum sa_code rc;

    f->name = name;
    f->line = strlen(name) + 1;
    rc = put_raw(f, name, f->line - 1, err);
    return rc != SA_OK ? rc : put_raw(f, ":", 1, err);
}

static enum sa_code
finish(struct fold *f, enum sa_code rc, char **out)
{
    if (rc != SA_OK) {
        free(f->p);
        f->p = NULL;
    }
    *out = f->p;
    return rc;
}

enum sa_code
sa_mailhdr_addresses(char **out, const char *name, char *const *list, size_t n, struct sa_err *err)
{
    struct fold f = {0};
    enum sa_code rc = begin(&f, name, err);

    for (size_t i = 0; rc == SA_OK && i < n; i++)
        rc = put_mailbox(&f, list[i], i, i + 1 == n, err);
    return finish(&f, rc, out);
}

/* Length of the well-formed UTF-8 character at s that is not a C1 control, else 0. */
static size_t
utf8_char(const unsigned char *s)
{
    size_t n = s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : 2;
    uint32_t cp = s[0] & (0x3F >> (n - 1));

    if (s[0] < 0xC2 || s[0] > 0xF4)
        return 0; /* a continuation byte, an overlong lead, or past U+10FFFF */
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF) || (cp >= 0x80 && cp <= 0x9F))
        return 0;
    return n;
}

int
sa_mailhdr_value_ok(const char *v)
{
    const unsigned char *s = (const unsigned char *)v;
    size_t n;

    while (*s) {
        if (*s == '\t' || (*s >= 0x20 && *s < 0x7F))
            n = 1;
        else if (*s < 0x80 || !(n = utf8_char(s)))
            return 0;
        s += n;
    }
    return 1;
}

enum sa_code
sa_mailhdr_text(char **out, const char *name, const char *text, struct sa_err *err)
{
    struct fold f = {0};
    enum sa_code rc;

    *out = NULL;
    if (!sa_mailhdr_value_ok(text)) /* it goes out labelled UTF-8 */
        return sa_fail(err, SA_EINVAL, "%s has a control byte or broken UTF-8", name);
    rc = begin(&f, name, err);

    if (rc == SA_OK && (needs_encoding(text) || strlen(name) + 2 + longest_word(text) > LINE_HARD))
        rc = put_encoded(&f, text, err);
    else if (rc == SA_OK)
        rc = put_words(&f, text, err);
    return finish(&f, rc, out);
}

int
sa_mailhdr_date(char *out, size_t cap, int64_t ms)
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
