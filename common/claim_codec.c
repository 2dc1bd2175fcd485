/* A claim record's JSON (claim.h: sa_claim_encode, sa_claim_decode) and its states' names:
 * strings cleaned to valid UTF-8 and escaped by hand, numbers written without locale. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "claim.h"
#include "layout.h"
#include "task.h"

static const char *state_names[] = {"none",      "sending", "sent",    "retrying",
                                    "cancelled", "dead",    "skipped", "junk"};

const char *
sa_claim_state_name(enum sa_claim_state s)
{
    return (unsigned)s < sizeof(state_names) / sizeof(state_names[0]) ? state_names[s] : "?";
}

const char *
sa_claim_state_text(const struct sa_claim *c)
{
    if (c->state == SA_CLAIM_SKIPPED && !strcmp(c->error, SA_CLAIM_PAUSED))
        return "skipped (paused)";
    return sa_claim_state_name(c->state);
}

/* Length of the valid UTF-8 sequence at s (1 to 4), 0 if s does not start one. Overlong
 * forms, surrogates and code points past U+10FFFF are not valid (RFC 3629). */
static size_t
utf8_len(const unsigned char *s)
{
    unsigned char lo = 0x80, hi = 0xBF;
    size_t n;

    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xC2 && s[0] <= 0xDF)
        n = 2;
    else if (s[0] >= 0xE0 && s[0] <= 0xEF)
        n = 3;
    else if (s[0] >= 0xF0 && s[0] <= 0xF4)
        n = 4;
    else
        return 0;
    lo = s[0] == 0xE0 ? 0xA0 : s[0] == 0xF0 ? 0x90 : lo;
    hi = s[0] == 0xED ? 0x9F : s[0] == 0xF4 ? 0x8F : hi;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    return n;
}

/* Copies in (NUL-terminated, at most cap - 1 bytes) with every byte that is not part of valid
 * UTF-8 replaced by '?': JSON strings must be UTF-8, and an error text may come from a
 * receiver or be cut inside a character by its field's size. Decoding copies the same way, so a
 * record read back encodes to what it holds (fuzz_claim: an error cut inside a character). */
static void
utf8_clean(char *out, size_t cap, const char *in)
{
    size_t o = 0;

    for (const unsigned char *p = (const unsigned char *)in; *p && o + 1 < cap;) {
        size_t n = utf8_len(p);

        if (!n || o + n >= cap) {
            out[o++] = '?';
            p++;
            continue;
        }
        memcpy(out + o, p, n);
        o += n;
        p += n;
    }
    out[o] = '\0';
}

/* The encoder writes the record by hand: it is on every send's path twice, and jansson's
 * object building cost more CPU than the publish of the record (perf, a burst of 20,000). */
struct jw {
    char *out;
    size_t cap, n; /* n > cap - 1 once anything did not fit */
};

static void
jw_bytes(struct jw *w, const char *s, size_t len)
{
    if (w->n + len < w->cap)
        memcpy(w->out + w->n, s, len);
    w->n += len;
}

static void
jw_key(struct jw *w, const char *key)
{
    jw_bytes(w, w->n ? ",\"" : "{\"", 2);
    jw_bytes(w, key, strlen(key));
    jw_bytes(w, "\":", 2);
}

/* The second byte of c's two-byte JSON escape (as jansson wrote them), or 0 if it has none. */
static char
short_escape(unsigned char c)
{
    static const char from[] = "\"\\\b\f\n\r\t", to[] = "\"\\bfnrt";
    const char *at = c ? strchr(from, c) : NULL;

    return at ? to[at - from] : 0;
}

/* A JSON string of s (valid UTF-8): quote, backslash and control bytes escaped, so that the
 * record is no longer than jansson made it. */
static void
jw_str(struct jw *w, const char *key, const char *s)
{
    static const char hex[] = "0123456789abcdef";

    jw_key(w, key);
    jw_bytes(w, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char esc[6] = {'\\', short_escape(*p), '0', '0', hex[*p >> 4], hex[*p & 15]};

        if (esc[1]) {
            jw_bytes(w, esc, 2);
        } else if (*p < 0x20) {
            esc[1] = 'u';
            jw_bytes(w, esc, 6);
        } else {
            jw_bytes(w, (const char *)p, 1);
        }
    }
    jw_bytes(w, "\"", 1);
}

static void
jw_int(struct jw *w, const char *key, int64_t v)
{
    char digits[SA_I64_TEXT];
    size_t n = sa_layout_i64(digits, v);

    jw_key(w, key);
    jw_bytes(w, digits, n);
}

static const char *const channel_names[] = {
    [SA_CHANNEL_WEBHOOK] = "webhook",
    [SA_CHANNEL_EMAIL] = "email",
};
#define CHANNELS (sizeof(channel_names) / sizeof(channel_names[0]))

/* A record's "channel": NULL (not written) when unknown. */
static const char *
channel_name(int channel)
{
    return channel > 0 && (size_t)channel < CHANNELS ? channel_names[channel] : NULL;
}

/* 0 for a record without one (written before channels were) or with one not known here. */
static int
channel_from(const char *name)
{
    for (int i = 1; name && (size_t)i < CHANNELS; i++)
        if (!strcmp(name, channel_names[i]))
            return i;
    return 0;
}

int
sa_claim_encode(const struct sa_claim *in, char *out, size_t cap)
{
    struct sa_claim c = *in;
    struct jw w = {out, cap, 0};
    const char *strs[][2] = {{"state", sa_claim_state_name(c.state)},
                             {"consumer", c.consumer},
                             {"instance", c.instance},
                             {"write", c.write_id},
                             {"error", c.error},
                             {"channel", channel_name(c.channel)}};
    const struct {
        const char *key;
        int64_t v;
        int when_known; /* written only when not 0 */
    } ints[] = {{"at", c.at_ms, 0},
                {"attempt", c.attempt, 0},
                {"due", c.due_ms, 0},
                {"scheduled", c.scheduled_ms, 0},
                {"booked", c.booked_ms, 1},
                {"moves", c.moves, 0},
                {"moved", c.moved_ms, 0},
                {"lateness_ms", c.lateness_ms, 0},
                {"http_status", c.http_status, 0},
                {"delivery_lateness_ms", c.delivery_lateness_ms, 1}};

    utf8_clean(c.consumer, sizeof(c.consumer), in->consumer);
    utf8_clean(c.instance, sizeof(c.instance), in->instance);
    utf8_clean(c.write_id, sizeof(c.write_id), in->write_id);
    utf8_clean(c.error, sizeof(c.error), in->error);
    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
        if (strs[i][1]) /* a channel only when known */
            jw_str(&w, strs[i][0], strs[i][1]);
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
        if (ints[i].v || !ints[i].when_known)
            jw_int(&w, ints[i].key, ints[i].v);
    jw_bytes(&w, "}", 1);
    if (w.n >= cap)
        return -1;
    out[w.n] = '\0';
    return (int)w.n;
}

static enum sa_claim_state
state_from(const char *name)
{
    for (size_t i = 1; i < SA_CLAIM_JUNK; i++) /* junk is never a stored state */
        if (name && !strcmp(name, state_names[i]))
            return (enum sa_claim_state)i;
    return SA_CLAIM_NONE;
}

enum sa_code
sa_claim_decode(struct sa_claim *c, const char *json, size_t len, struct sa_err *err)
{
    json_error_t jerr;
    json_t *o = json_loadb(json, len, 0, &jerr);
    const char *state = NULL, *consumer = "", *error = "", *instance = "", *write_id = "",
               *channel = NULL;
    json_int_t at = 0, due = 0, sched = 0, booked = 0, moved = 0, late = 0, delivery = 0;
    int attempt = 0, moves = 0, status = 0;

    memset(c, 0, sizeof(*c));
    if (!o)
        return sa_fail(err, SA_EINVAL, "claim record is not JSON: %s", jerr.text);
    if (json_unpack_ex(
            o, &jerr, 0,
            "{s:s, s?I, s?s, s?s, s?s, s?i, s?I, s?I, s?I, s?i, s?I, s?I, s?I, s?i, s?s, s?s}",
            "state", &state, "at", &at, "consumer", &consumer, "instance", &instance, "write",
            &write_id, "attempt", &attempt, "due", &due, "scheduled", &sched, "booked", &booked,
            "moves", &moves, "moved", &moved, "lateness_ms", &late, "delivery_lateness_ms",
            &delivery, "http_status", &status, "error", &error, "channel", &channel) != 0) {
        json_decref(o);
        return sa_fail(err, SA_EINVAL, "claim record does not fit: %s", jerr.text);
    }
    c->state = state_from(state);
    c->at_ms = at;
    utf8_clean(c->consumer, sizeof(c->consumer), consumer);
    snprintf(c->instance, sizeof(c->instance), "%s", instance);
    snprintf(c->write_id, sizeof(c->write_id), "%s", write_id);
    c->attempt = attempt;
    c->due_ms = due;
    c->scheduled_ms = sched;
    c->booked_ms = booked;
    c->moves = moves;
    c->moved_ms = moved;
    c->lateness_ms = late;
    c->delivery_lateness_ms = delivery;
    c->http_status = status;
    c->channel = channel_from(channel);
    utf8_clean(c->error, sizeof(c->error), error);
    enum sa_code rc = c->state == SA_CLAIM_NONE
                          ? sa_fail(err, SA_EINVAL, "claim state %.40s is unknown", state)
                          : SA_OK;
    json_decref(o); /* state and the other strings live in o */
    return rc;
}
