/* Cron fields as bit sets, matched against local wall-clock time that is stepped with civil
 * arithmetic; only the conversion between local time and instants goes through ICU. Because
 * candidates are local times, a repeated hour is visited once; because fires must strictly
 * increase, the local times inside a gap collapse onto one fire. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cron.h"
#include "cron_tz.h"

struct sa_cron {
    uint64_t sec, min;
    uint32_t hour, dom, mon, dow;
    int dom_star, dow_star;
};

struct field {
    const char *name;
    int lo, hi;
    const char *const *names; /* index = value - lo, or NULL */
};

static const char *const month_names[] = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL",
                                          "AUG", "SEP", "OCT", "NOV", "DEC", NULL};
static const char *const day_names[] = {"SUN", "MON", "TUE", "WED", "THU",
                                        "FRI", "SAT", "SUN", NULL};

static int
value(const struct field *f, const char **p, int *out)
{
    char *end;
    long v;

    for (int i = 0; f->names && f->names[i]; i++)
        if (!strncasecmp(*p, f->names[i], 3)) {
            *out = f->lo + i;
            *p += 3;
            return 0;
        }
    v = strtol(*p, &end, 10);
    if (end == *p || v < f->lo || v > f->hi)
        return -1;
    *out = (int)v;
    *p = end;
    return 0;
}

/* One comma-separated item: *, a, a-b, each with an optional /step. */
static int
item(const struct field *f, const char **p, uint64_t *bits)
{
    int a = f->lo, b = f->hi, step = 1;

    if (**p == '*')
        (*p)++;
    else if (value(f, p, &a) != 0)
        return -1;
    else if (**p == '-' && ((*p)++, value(f, p, &b) != 0 || b < a))
        return -1;
    else if (**p != '-' && **p != '/')
        b = a;
    if (**p == '/') {
        char *end;
        (*p)++;
        step = (int)strtol(*p, &end, 10);
        if (end == *p || step < 1 || step > f->hi)
            return -1;
        *p = end;
    }
    for (int v = a; v <= b; v += step)
        *bits |= 1ULL << v;
    return 0;
}

static enum sa_code
parse_field(const struct field *f, const char *text, uint64_t *bits, int *star, struct sa_err *err)
{
    const char *p = text;

    *bits = 0;
    if (star)
        *star = !strcmp(text, "*") || !strcmp(text, "?");
    if (!strcmp(text, "?"))
        p = "*";
    for (;;) {
        if (item(f, &p, bits) != 0)
            return sa_fail(err, SA_EINVAL, "cron %s field \"%.40s\" is not understood", f->name,
                           text);
        if (*p == '\0')
            return SA_OK;
        if (*p++ != ',')
            return sa_fail(err, SA_EINVAL, "cron %s field \"%.40s\" is not understood", f->name,
                           text);
    }
}

static const char *
expand_macro(const char *expr)
{
    static const char *const macros[][2] = {{"@yearly", "0 0 1 1 *"},  {"@annually", "0 0 1 1 *"},
                                            {"@monthly", "0 0 1 * *"}, {"@weekly", "0 0 * * 0"},
                                            {"@daily", "0 0 * * *"},   {"@midnight", "0 0 * * *"},
                                            {"@hourly", "0 * * * *"}};

    for (size_t i = 0; i < sizeof(macros) / sizeof(macros[0]); i++)
        if (!strcasecmp(expr, macros[i][0]))
            return macros[i][1];
    return expr;
}

static enum sa_code
parse_fields(struct sa_cron *c, char **tok, int n, struct sa_err *err)
{
    static const struct field sec = {"second", 0, 59, NULL}, min = {"minute", 0, 59, NULL},
                              hour = {"hour", 0, 23, NULL}, dom = {"day-of-month", 1, 31, NULL},
                              mon = {"month", 1, 12, month_names},
                              dow = {"day-of-week", 0, 7, day_names};
    uint64_t b[4] = {0, 0, 0, 0};
    enum sa_code rc = SA_OK;
    int k = 0;

    if (n == 6)
        rc = parse_field(&sec, tok[k++], &c->sec, NULL, err);
    else
        c->sec = 1; /* second 0 */
    if (rc == SA_OK)
        rc = parse_field(&min, tok[k++], &c->min, NULL, err);
    if (rc == SA_OK)
        rc = parse_field(&hour, tok[k++], &b[0], NULL, err);
    if (rc == SA_OK)
        rc = parse_field(&dom, tok[k++], &b[1], &c->dom_star, err);
    if (rc == SA_OK)
        rc = parse_field(&mon, tok[k++], &b[2], NULL, err);
    if (rc == SA_OK)
        rc = parse_field(&dow, tok[k++], &b[3], &c->dow_star, err);
    c->hour = (uint32_t)b[0];
    c->dom = (uint32_t)b[1];
    c->mon = (uint32_t)b[2];
    c->dow = (uint32_t)(b[3] | (b[3] >> 7)); /* 7 is Sunday too */
    return rc;
}

enum sa_code
sa_cron_parse(struct sa_cron **out, const char *expr, struct sa_err *err)
{
    char buf[256], *tok[8], *save = NULL;
    int n = 0;
    struct sa_cron *c;
    enum sa_code rc;

    *out = NULL;
    if (!expr || snprintf(buf, sizeof(buf), "%s", expand_macro(expr)) >= (int)sizeof(buf))
        return sa_fail(err, SA_EINVAL, "cron expression is missing or too long");
    for (char *t = strtok_r(buf, " \t", &save); t && n < 8; t = strtok_r(NULL, " \t", &save))
        tok[n++] = t;
    if (n != 5 && n != 6)
        return sa_fail(
            err, SA_EINVAL,
            "cron \"%.60s\" has %d fields; want 5 (m h dom mon dow) or 6 (with seconds first)",
            expr, n);
    c = calloc(1, sizeof(*c));
    if (!c)
        return sa_fail(err, SA_ENOMEM, "no memory for a cron expression");
    rc = parse_fields(c, tok, n, err);
    if (rc != SA_OK) {
        free(c);
        return rc;
    }
    *out = c;
    return SA_OK;
}

void
sa_cron_free(struct sa_cron *c)
{
    free(c);
}

static int
day_matches(const struct sa_cron *c, const struct civil *t)
{
    int dom = (c->dom >> t->day) & 1, dow = (c->dow >> civil_weekday(t)) & 1;

    if (c->dom_star || c->dow_star)
        return dom && dow;
    return dom || dow; /* both restricted: either one (classic cron) */
}

/* The first local time >= t that matches, stepping the coarsest field that does not. */
static int
next_local(const struct sa_cron *c, struct civil *t)
{
    for (int i = 0; i < 200000; i++) {
        if (t->year > 9999)
            return -1;
        if (!((c->mon >> t->month) & 1))
            civil_next_month(t);
        else if (!day_matches(c, t))
            civil_next_day(t);
        else if (!((c->hour >> t->hour) & 1))
            civil_next_hour(t);
        else if (!((c->min >> t->minute) & 1))
            civil_next_minute(t);
        else if (!((c->sec >> t->second) & 1))
            civil_next_second(t);
        else
            return 0;
    }
    return -1;
}

enum sa_code
sa_cron_next(const struct sa_cron *c, const char *zone, int64_t after_ms, int64_t *next_ms,
             int *flags, struct sa_err *err)
{
    struct tz *z = NULL;
    struct civil t;
    int64_t at;
    enum sa_code rc = tz_open(&z, zone, err);

    if (rc != SA_OK)
        return rc;
    /* From the local second holding after_ms itself, not the next one: a gap's end is the first
     * instant after its last second before (01:59:59.999 EST, then 03:00:00 EDT), so starting one
     * second on would step over every local time of the gap. What is not after after_ms is
     * skipped below. */
    tz_local(z, after_ms - ((after_ms % 1000) + 1000) % 1000, &t);
    for (int guard = 0; guard < 5000; guard++) {
        if (next_local(c, &t) != 0 || t.year > tz_year(z, after_ms) + 5)
            break;
        at = tz_instant(z, &t, flags);
        if (at > after_ms) {
            *next_ms = at;
            tz_close(z);
            return SA_OK;
        }
        civil_next_second(&t); /* inside a gap or a repeat: that instant was taken already */
    }
    tz_close(z);
    return sa_fail(err, SA_ENOTFOUND,
                   "the cron expression has no fire time in the next five years");
}
