/* Webhook sends: built from the opened task only (a task is self-contained), redirects
 * not followed, only http and https, one time limit per request. Every address curl is
 * about to connect to passes the webhook address policy first, and a failure's reason is a
 * class that names no host, address or port (a producer reads it in status). */
#include <inttypes.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "deliver.h"
#include "log.h"
#include "sign.h"
#include "timeparse.h"
#include "transfer.h"

static int
has_header(const struct sa_task *t, const char *name)
{
    for (size_t i = 0; i < t->n_headers; i++)
        if (!strcasecmp(t->headers[i].name, name))
            return 1;
    return 0;
}

static struct curl_slist *
append(struct curl_slist *l, int *bad, const char *fmt, const char *a, const char *b)
{
    char line[SA_HEADER_MAX + 8];
    struct curl_slist *n;

    snprintf(line, sizeof(line), fmt, a, b);
    n = curl_slist_append(l, line);
    if (!n)
        *bad = 1;
    return n ? n : l;
}

static struct curl_slist *
build_headers(const struct consumer *c, const struct sa_task *t, int64_t now_ms, int *bad)
{
    struct curl_slist *l = NULL;
    char ts[24], sig[1024];
    int n;

    snprintf(ts, sizeof(ts), "%" PRId64, now_ms / 1000);
    n = signer_sign(c->signer, sig, sizeof(sig), t->id, now_ms / 1000, t->body, t->body_len);
    if (n < 0)
        *bad = 1;
    if (n > 0)
        l = append(l, bad, "webhook-signature: %s%s", sig, "");
    for (size_t i = 0; i < t->n_headers; i++)
        l = append(l, bad, "%s: %s", t->headers[i].name, t->headers[i].value);
    if (!has_header(t, "Content-Type"))
        l = append(l, bad, "%s%s", "Content-Type: application/json", "");
    l = append(l, bad, "webhook-id: %s%s", t->id, "");
    l = append(l, bad, "webhook-timestamp: %s%s", ts, "");
    l = append(l, bad, "%s%s", "User-Agent: sendat/0.1", "");
    l = append(l, bad, "%s%s", "Expect:", ""); /* no 100-continue round trip */
    return l;
}

/* Judges the resolved address itself, so a name that resolves (or rebinds) to a refused
 * address is refused too; curl tries the host's next address, if any. */
static curl_socket_t
open_checked(void *arg, curlsocktype purpose, struct curl_sockaddr *a)
{
    struct transfer *x = arg;

    (void)purpose;
    if (!sa_netpolicy_allows(x->policy, &a->addr)) {
        x->refused = 1;
        return CURL_SOCKET_BAD;
    }
    return socket(a->family, a->socktype, a->protocol);
}

enum sa_code
webhook_setup(CURL *e, struct consumer *c, struct transfer *x, struct sa_err *err)
{
    const struct sa_task *t = x->h->task;
    int bad = 0;

    x->hdrs = build_headers(c, t, x->started_ms, &bad);
    if (bad)
        return sa_fail(err, SA_ENOMEM, "no memory for the webhook headers");
    curl_easy_setopt(e, CURLOPT_URL, t->url);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, t->body ? (const char *)t->body : "");
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)t->body_len);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->hdrs);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)c->cfg.http_timeout_ms);
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    x->policy = c->cfg.policy;
    curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, open_checked);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, x);
    return SA_OK;
}

static int64_t
retry_after(CURL *e)
{
    struct curl_header *hdr = NULL;
    long long secs;

    if (curl_easy_header(e, "Retry-After", 0, CURLH_HEADER, -1, &hdr) != CURLHE_OK)
        return 0;
    secs = strtoll(hdr->value, NULL, 10);
    return secs > 0 && secs < 86400 ? secs * 1000 : 0;
}

/* What the producer reads of any failure without an HTTP answer. */
#define WEBHOOK_NO_ANSWER "no HTTP answer"

/* A failure as a class: curl's error buffer names the host, the address and the port
 * ("Failed to connect to ::1 port 8080"), which would map the consumers' network for
 * whoever reads status. curl_easy_strerror's texts are fixed and name nothing. */
static const char *
failure_class(CURLcode cc)
{
    switch (cc) {
    case CURLE_COULDNT_CONNECT:
        return "connect failed";
    case CURLE_COULDNT_RESOLVE_HOST:
        return "host not found";
    case CURLE_UNSUPPORTED_PROTOCOL: /* "Received HTTP/0.9 when not allowed" */
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_BAD_CONTENT_ENCODING:
        return "bad response";
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
        return "connection lost";
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
        return "TLS failed";
    default:
        return curl_easy_strerror(cc);
    }
}

void
webhook_result(CURL *e, CURLcode cc, const struct transfer *x, struct transfer_result *r)
{
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &r->status);
    if (cc == CURLE_COULDNT_CONNECT && x->refused) {
        snprintf(r->error, sizeof(r->error), "%s", SA_NETPOLICY_REFUSED);
        r->permanent = 1; /* the same answer on every attempt */
        return;
    }
    if (cc != CURLE_OK) {
        long sent = 0;
        /* the class for the operator's log only: what the producer reads (status, dead
         * letters) is one class, or a refused port, a filtered one and a port that speaks
         * something else than HTTP would tell apart the consumers' network (issue 37.13) */
        sa_log(SA_LOG_INFO, "no_http_answer", "task=%s class=\"%s\"", x->h->task->id,
               failure_class(cc));
        snprintf(r->error, sizeof(r->error), "%s", WEBHOOK_NO_ANSWER);
        /* bytes of the request written: after that the receiver may have it */
        r->unknown = curl_easy_getinfo(e, CURLINFO_REQUEST_SIZE, &sent) != CURLE_OK || sent > 0;
        return; /* timeouts, refused connections: retry (at-least-once) */
    }
    r->ok = r->status >= 200 && r->status < 300;
    if (!r->ok)
        snprintf(r->error, sizeof(r->error), "HTTP %ld", r->status);
    /* 408, 429 and 5xx are worth another try; any other answer will not change */
    r->permanent = !r->ok && r->status != 408 && r->status != 429 && r->status < 500;
    if (r->status == 429 || r->status == 503)
        r->retry_after_ms = retry_after(e);
}
