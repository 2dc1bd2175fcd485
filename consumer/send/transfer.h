/* One send on the multi handle, whatever the channel: the transfer carries the held task
 * from start to outcome_done, with the lists and MIME tree its easy handle points at. */
#ifndef TRANSFER_H
#define TRANSFER_H

#include <stdint.h>

#include <curl/curl.h>

#include "consumer.h"
#include "outcome.h"
#include "wheel.h"

struct transfer {
    CURL *easy;
    struct held *h;
    uint64_t rev;
    int64_t started_ms;
    struct curl_slist *hdrs;
    struct curl_slist *rcpts; /* email */
    curl_mime *mime;          /* email */
    char errbuf[CURL_ERROR_SIZE];
    char host[256];                    /* for the provider limits */
    int lease;                         /* fleet lease taken, or -1 */
    const struct sa_netpolicy *policy; /* webhooks: judges each address before connecting */
    int refused;                  /* a resolved address was refused by the webhook address policy */
    struct transfer *prev, *next; /* every send in flight, to keep their messages alive */
};

/* Sets up e for the channel; on failure the caller frees x's lists. */
enum sa_code webhook_setup(CURL *e, struct consumer *c, struct transfer *x,
                           struct sa_err *err) SA_MUST_CHECK;
enum sa_code smtp_setup(CURL *e, struct consumer *c, struct transfer *x,
                        struct sa_err *err) SA_MUST_CHECK;

/* Classifies a finished transfer of either channel. */
void webhook_result(CURL *e, CURLcode cc, const struct transfer *x, struct transfer_result *r);
void smtp_result(CURL *e, CURLcode cc, const struct transfer *x, struct transfer_result *r);

/* The destination host a task's send goes to (webhook host, or the SMTP server's). */
void transfer_host(const struct consumer *c, const struct sa_task *t, char *out, size_t cap);

/* Adds the send of h to multi; h travels with the transfer until transfer_collect hands it to
 * outcome_done. On failure h is still the caller's. */
enum sa_code transfer_start(CURLM *multi, struct consumer *c, struct held *h, uint64_t rev,
                            int64_t now_ms, const char *host, int lease,
                            struct sa_err *err) SA_MUST_CHECK;

/* Marks in progress the message of every send in flight not touched for interval_ms, so a
 * slow receiver does not let the ack wait run out (a redelivery would send it twice). */
void transfer_touch(struct consumer *c, int64_t now_ms, int64_t interval_ms);

/* Hands every finished transfer to outcome_done; returns how many finished. */
int transfer_collect(CURLM *multi, struct consumer *c);

/* The drain time ran out: every send still in flight is dropped unanswered and its task
 * handed back to the fleet, which finds it claimed by a member gone and takes it over by
 * those rules (at-least-once: sent again; at-most-once: dead-lettered). Returns how many. */
int transfer_abandon_all(CURLM *multi, struct consumer *c);

#endif
