/* Email through libcurl's SMTP: TLS required unless the server is on loopback (tests), the
 * MIME tree built with curl_mime (text first, HTML second, quoted-printable), a Message-ID
 * derived from the task id so every retry carries the same one, and Bcc recipients only in
 * the envelope. SMTP 4xx and transport errors retry; 5xx is permanent. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mailhdr.h"
#include "smtp.h"
#include "transfer.h"

static int
is_loopback(const char *host)
{
    return !strcasecmp(host, "localhost") || !strncmp(host, "127.", 4) || !strcmp(host, "[::1]") ||
           !strcmp(host, "::1");
}

static int
check_url(struct smtp_config *s, const char *url, const char *ehlo)
{
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL;
    int bad = 0;

    if (!u || curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
        (strcasecmp(scheme, "smtp") && strcasecmp(scheme, "smtps"))) {
        fprintf(stderr,
                "sendat-consumer: SENDAT_SMTP_URL=%s: want smtp://host:587 or smtps://host:465\n",
                url);
        bad = -1;
    } else if (s->tls_off && !is_loopback(host)) {
        fprintf(stderr,
                "sendat-consumer: SENDAT_SMTP_TLS=off is refused for %s: only a loopback server "
                "may go without TLS\n",
                host);
        bad = -1;
    }
    if (!bad &&
        snprintf(s->url, sizeof(s->url), "%s/%s", url, ehlo ? ehlo : "") >= (int)sizeof(s->url))
        bad = -1;
    curl_free(scheme);
    curl_free(host);
    curl_url_cleanup(u);
    return bad;
}

int
smtp_config_load(struct smtp_config *s)
{
    const char *url = getenv("SENDAT_SMTP_URL"), *tls = getenv("SENDAT_SMTP_TLS");

    s->user = getenv("SENDAT_SMTP_USER");
    s->password = getenv("SENDAT_SMTP_PASSWORD");
    s->from = getenv("SENDAT_SMTP_FROM");
    s->ca_file = getenv("SENDAT_SMTP_CA_FILE");
    if (tls && strcmp(tls, "off") && strcmp(tls, "required")) {
        fprintf(stderr, "sendat-consumer: SENDAT_SMTP_TLS=%s: want required or off\n", tls);
        return -1;
    }
    s->tls_off = tls && !strcmp(tls, "off");
    if (!url || !*url)
        return 0;
    return check_url(s, url, getenv("SENDAT_SMTP_EHLO"));
}

/* A short field (Date, Message-ID, Content-Type); curl copies it. */
static int
add_line(struct curl_slist **l, const char *name, const char *value)
{
    char line[256];
    struct curl_slist *n;

    if (snprintf(line, sizeof(line), "%s: %s", name, value) >= (int)sizeof(line))
        return -1;
    n = curl_slist_append(*l, line);
    if (!n)
        return -1;
    *l = n;
    return 0;
}

static enum sa_code
add_field(struct curl_slist **l, char **field, enum sa_code rc, struct sa_err *err)
{
    struct curl_slist *n = rc == SA_OK ? curl_slist_append(*l, *field) : NULL;

    free(*field);
    *field = NULL;
    if (rc != SA_OK)
        return rc;
    if (!n)
        return sa_fail(err, SA_ENOMEM, "no memory for a header");
    *l = n;
    return SA_OK;
}

/* "To: a, Name <b>" from a recipient list, folded; also adds each bare address to the envelope. */
static enum sa_code
add_list(struct transfer *x, const char *name, char **list, size_t n, struct sa_err *err)
{
    char name_buf[256], addr[SA_ADDRESS_MAX + 1], *field = NULL;

    for (size_t i = 0; i < n; i++) {
        struct curl_slist *r;
        if (sa_address_parse(list[i], name_buf, sizeof(name_buf), addr, sizeof(addr), NULL) !=
            SA_OK)
            return sa_fail(err, SA_EPERM, "recipient %zu of %s is not a valid address", i + 1,
                           name ? name : "Bcc");
        if (!(r = curl_slist_append(x->rcpts, addr)))
            return sa_fail(err, SA_ENOMEM, "no memory for the recipients");
        x->rcpts = r;
    }
    if (!name || !n)
        return SA_OK; /* Bcc: envelope only */
    return add_field(&x->hdrs, &field, sa_mailhdr_addresses(&field, name, list, n, err), err);
}

static enum sa_code
build_headers(struct transfer *x, const struct sa_task *t, const char *from, struct sa_err *err)
{
    char value[256], *field = NULL, *one[1] = {(char *)from};
    enum sa_code rc =
        add_field(&x->hdrs, &field, sa_mailhdr_addresses(&field, "From", one, 1, err), err);

    if (rc == SA_OK)
        rc = add_list(x, "To", t->rcpt[SA_RCPT_TO], t->n_rcpt[SA_RCPT_TO], err);
    if (rc == SA_OK)
        rc = add_list(x, "Cc", t->rcpt[SA_RCPT_CC], t->n_rcpt[SA_RCPT_CC], err);
    if (rc == SA_OK)
        rc = add_list(x, NULL, t->rcpt[SA_RCPT_BCC], t->n_rcpt[SA_RCPT_BCC], err);
    if (rc == SA_OK)
        rc = add_field(&x->hdrs, &field, sa_mailhdr_text(&field, "Subject", t->subject, err), err);
    if (rc == SA_OK && t->reply_to) {
        one[0] = t->reply_to;
        rc =
            add_field(&x->hdrs, &field, sa_mailhdr_addresses(&field, "Reply-To", one, 1, err), err);
    }
    if (rc != SA_OK)
        return rc;
    sa_mailhdr_date(value, sizeof(value), x->started_ms);
    if (add_line(&x->hdrs, "Date", value))
        return sa_fail(err, SA_ENOMEM, "no memory for the Date header");
    snprintf(value, sizeof(value), "<%s@sendat>", t->id); /* the same on every attempt */
    if (add_line(&x->hdrs, "Message-ID", value))
        return sa_fail(err, SA_ENOMEM, "no memory for the Message-ID header");
    return SA_OK;
}

static int
add_text_part(curl_mime *m, const char *text, const char *type)
{
    curl_mimepart *p = curl_mime_addpart(m);

    return !p || curl_mime_data(p, text, CURL_ZERO_TERMINATED) != CURLE_OK ||
           curl_mime_type(p, type) != CURLE_OK ||
           curl_mime_encoder(p, "quoted-printable") != CURLE_OK;
}

/* Text alone is one part; text and HTML are the two parts of a top-level
 * multipart/alternative (the Content-Type header replaces curl's default multipart/mixed and
 * curl adds the boundary). */
static int
build_mime(CURL *e, struct transfer *x, const struct sa_task *t)
{
    x->mime = curl_mime_init(e);
    if (!x->mime || add_text_part(x->mime, t->text ? t->text : "", "text/plain; charset=utf-8"))
        return -1;
    if (!t->html)
        return 0;
    return add_text_part(x->mime, t->html, "text/html; charset=utf-8") ||
           add_line(&x->hdrs, "Content-Type", "multipart/alternative");
}

static void
set_connection(CURL *e, const struct smtp_config *s)
{
    curl_easy_setopt(e, CURLOPT_URL, s->url);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
    curl_easy_setopt(e, CURLOPT_USE_SSL, s->tls_off ? (long)CURLUSESSL_NONE : (long)CURLUSESSL_ALL);
    if (s->ca_file)
        curl_easy_setopt(e, CURLOPT_CAINFO, s->ca_file);
    if (s->user)
        curl_easy_setopt(e, CURLOPT_USERNAME, s->user);
    if (s->password)
        curl_easy_setopt(e, CURLOPT_PASSWORD, s->password);
}

enum sa_code
smtp_setup(CURL *e, struct consumer *c, struct transfer *x, struct sa_err *err)
{
    const struct sa_task *t = x->h->task;
    const char *from = t->from && *t->from ? t->from : c->cfg.smtp.from;
    char name[256], addr[SA_ADDRESS_MAX + 3];

    if (!c->cfg.smtp.url[0])
        return sa_fail(err, SA_EPERM, "email task, but this consumer has no SENDAT_SMTP_URL");
    if (!from ||
        sa_address_parse(from, name, sizeof(name), addr + 1, sizeof(addr) - 2, NULL) != SA_OK)
        return sa_fail(err, SA_EPERM, "email task without a From (set --from or SENDAT_SMTP_FROM)");
    addr[0] = '<';
    strcat(addr, ">");
    if (build_headers(x, t, from, err) != SA_OK || build_mime(e, x, t) != 0)
        return sa_fail(err, SA_EPERM, "cannot build the message"); /* the first cause stays */
    set_connection(e, &c->cfg.smtp);
    curl_easy_setopt(e, CURLOPT_MAIL_FROM, addr);
    curl_easy_setopt(e, CURLOPT_MAIL_RCPT, x->rcpts);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->hdrs);
    curl_easy_setopt(e, CURLOPT_MIMEPOST, x->mime);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)c->cfg.http_timeout_ms);
    return SA_OK;
}

void
smtp_result(CURL *e, CURLcode cc, const struct transfer *x, struct transfer_result *r)
{
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &r->status);
    r->ok = cc == CURLE_OK;
    if (r->ok)
        return;
    /* curl's error buffer can name the server and a reply can quote a recipient: the reason
     * goes to the broker, so it carries the code and curl's generic text only */
    (void)x;
    snprintf(r->error, sizeof(r->error), "SMTP %ld: %s", r->status, curl_easy_strerror(cc));
    r->permanent = r->status >= 500 && r->status < 600;
    /* 354 was the last reply: the message went and its final reply did not come back */
    r->unknown = r->status == 354;
}
