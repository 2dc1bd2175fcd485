/* Logging for the binaries: one line per event, written with a single write(2) so lines
 * from several threads never interleave (held lines: several whole lines to a write of at
 * most PIPE_BUF bytes). */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static enum sa_log_level min_level = SA_LOG_INFO;
static const char *prog_name = "sendat";
static int json_format;

#define HELD_MAX 16384
static __thread struct {
    int on;
    size_t n;
    char buf[HELD_MAX];
} held;

void
sa_log_init(const char *prog)
{
    const char *lv = getenv("SENDAT_LOG_LEVEL");

    const char *fmt = getenv("SENDAT_LOG_FORMAT");

    prog_name = prog;
    json_format = fmt && !strcasecmp(fmt, "json");
    if (!lv)
        return;
    if (!strcasecmp(lv, "debug"))
        min_level = SA_LOG_DEBUG;
    else if (!strcasecmp(lv, "warn"))
        min_level = SA_LOG_WARN;
    else if (!strcasecmp(lv, "error"))
        min_level = SA_LOG_ERROR;
}

/* How much of buf (n bytes of whole lines) to write at once: up to the end of the last line
 * that fits in PIPE_BUF. */
static size_t
piece_of(const char *buf, size_t n)
{
    size_t most = n < PIPE_BUF ? n : PIPE_BUF;
    const char *end = memrchr(buf, '\n', most);

    return end ? (size_t)(end - buf) + 1 : most;
}

/* Writes buf in pieces of at most PIPE_BUF bytes that end at a line's end: a write that size
 * to a pipe is never mixed with another thread's, so lines stay whole. */
static void
write_lines(const char *buf, size_t n)
{
    while (n > 0) {
        ssize_t w = write(STDERR_FILENO, buf, piece_of(buf, n));

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return; /* stderr is gone: the lines have nowhere to go */
        buf += w;
        n -= (size_t)w;
    }
}

void
sa_log_flush(void)
{
    size_t n = held.n;

    held.n = 0;
    write_lines(held.buf, n);
}

void
sa_log_hold(int on)
{
    if (!on)
        sa_log_flush();
    held.on = on;
}

/* Writes line (n bytes, with its newline), or holds it. */
static void
emit(enum sa_log_level level, const char *line, size_t n)
{
    if (held.n + n > sizeof(held.buf))
        sa_log_flush();
    memcpy(held.buf + held.n, line, n);
    held.n += n;
    if (!held.on || level >= SA_LOG_WARN)
        sa_log_flush();
}

/* Appends s as a JSON string body (without quotes). */
static size_t
json_escape(char *out, size_t cap, const char *s, size_t n)
{
    size_t w = 0;

    for (size_t i = 0; i < n && w + 7 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            out[w++] = '\\';
            out[w++] = (char)c;
        } else if (c < 0x20) {
            w += (size_t)snprintf(out + w, cap - w, "\\u%04x", c);
        } else {
            out[w++] = (char)c;
        }
    }
    return w;
}

/* One key=value pair of a formatted line. A quoted value ends at the quote that is followed by
 * the end of the line or by " key=": callers write error="%s" with texts that may hold quotes
 * of their own (`SENDAT_HOST_LIMITS: "bar" is not ...`), and those stay inside the value. */
struct pair {
    const char *key, *val, *next;
    size_t key_len, val_len;
};

static int
starts_pair(const char *p)
{
    size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-");
    return n > 0 && p[n] == '=';
}

static int
next_pair(const char *p, struct pair *out)
{
    const char *eq, *v, *end;

    p += strspn(p, " ");
    eq = strchr(p, '=');
    if (!*p || !eq)
        return 0;
    v = eq + 1;
    if (*v == '"') {
        v++;
        for (end = v; *end; end++)
            if (*end == '"' && (end[1] == '\0' || (end[1] == ' ' && starts_pair(end + 2))))
                break;
        out->next = *end ? end + 1 : end;
    } else {
        end = v + strcspn(v, " ");
        out->next = end;
    }
    out->key = p;
    out->key_len = (size_t)(eq - p);
    out->val = v;
    out->val_len = (size_t)(end - v);
    return 1;
}

/* Rewrites kv in place as logfmt whose quoted values escape '"', '\' and control bytes. */
static void
requote(char *kv, size_t cap)
{
    char out[1024];
    size_t w = 0;
    struct pair pr;

    for (const char *p = kv; next_pair(p, &pr) && w + 8 < sizeof(out); p = pr.next) {
        int quoted = pr.val > pr.key + pr.key_len + 1;
        w += (size_t)snprintf(out + w, sizeof(out) - w, "%s%.*s=%s", w ? " " : "", (int)pr.key_len,
                              pr.key, quoted ? "\"" : "");
        for (size_t i = 0; i < pr.val_len && w + 6 < sizeof(out); i++) {
            unsigned char c = (unsigned char)pr.val[i];
            if (quoted && (c == '"' || c == '\\'))
                out[w++] = '\\';
            if (c < 0x20 || c == 0x7f)
                w += (size_t)snprintf(out + w, sizeof(out) - w, "\\x%02x", c);
            else
                out[w++] = (char)c;
        }
        if (quoted && w + 1 < sizeof(out))
            out[w++] = '"';
    }
    w = w < sizeof(out) ? w : sizeof(out) - 1;
    w = w < cap ? w : cap - 1; /* a cut line still ends */
    memcpy(kv, out, w);
    kv[w] = '\0';
}

/* "a=1 b=\"x y\"" -> ,"a":"1","b":"x y" (values stay strings: a log line is no schema). */
static size_t
logfmt_to_json(char *out, size_t cap, const char *kv)
{
    size_t w = 0;
    struct pair pr;

    for (const char *p = kv; next_pair(p, &pr) && w + 16 < cap; p = pr.next) {
        out[w++] = ',';
        out[w++] = '"';
        w += json_escape(out + w, cap - w, pr.key, pr.key_len);
        w += (size_t)snprintf(out + w, cap - w, "\":\"");
        w += json_escape(out + w, cap - w, pr.val, pr.val_len);
        out[w++] = '"';
    }
    return w;
}

/* Rewrites line as one JSON object from the header fields and the key=value pairs in kv. */
static void
to_json(char *line, size_t cap, const struct tm *tm, long nsec, const char *level,
        const char *event, const char *kv)
{
    char pairs[1024], head[256];
    size_t w = logfmt_to_json(pairs, sizeof(pairs) - 1, kv);

    pairs[w] = '\0';
    snprintf(head, sizeof(head),
             "{\"time\":\"%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ\",\"level\":\"%s\",\"prog\":\"%s\","
             "\"event\":\"%s\"",
             tm->tm_year + 1900, tm->tm_mon + 1, tm->tm_mday, tm->tm_hour, tm->tm_min, tm->tm_sec,
             nsec / 1000000, level, prog_name, event);
    size_t hl = strlen(head), pl = strlen(pairs);

    if (hl + pl + 3 > cap)
        pl = cap > hl + 3 ? cap - hl - 3 : 0; /* a cut line still closes its object */
    memcpy(line, head, hl);
    memcpy(line + hl, pairs, pl);
    line[hl + pl] = '}';
    line[hl + pl + 1] = '\0';
}

void
sa_log(enum sa_log_level level, const char *event, const char *fmt, ...)
{
    static const char *names[] = {"debug", "info", "warn", "error"};
    char line[1024];
    struct timespec ts;
    struct tm tm;
    va_list ap;
    int n;

    if (level < min_level)
        return;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    n = snprintf(line, sizeof(line),
                 "time=%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ level=%s prog=%s event=%s ",
                 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                 ts.tv_nsec / 1000000, names[level], prog_name, event);
    if (n < 0 || (size_t)n >= sizeof(line) - 2)
        n = (int)sizeof(line) - 2;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof(line) - 2 - (size_t)n, fmt, ap);
    va_end(ap);
    /* control bytes (a junk subject's escape code) are escaped by requote and to_json */
    if (json_format)
        to_json(line, sizeof(line), &tm, ts.tv_nsec, names[level], event, line + n);
    else
        requote(line + n, sizeof(line) - 2 - (size_t)n);
    n = (int)strlen(line);
    line[n++] = '\n';
    emit(level, line, (size_t)n);
}
