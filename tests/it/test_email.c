/* Email as a real SMTP server (aiosmtpd) receives it, parsed with Python's email package: a
 * Korean subject decoded exactly, display names, text and HTML parts, a Date, Bcc only in the
 * envelope, and the same Message-ID on a message that was refused once with 451 and retried.
 * Also the refusals: bad addresses and CR/LF at the producer, TLS off for a remote server. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "check.h"
#include "fixture.h"

#define SUBJECT "안녕하세요, sendat 주간 알림입니다 — 월요일 07:00 (Asia/Seoul) 확인해 주세요"

static struct fx F;
static struct proc sink;
static char maildir[400];

static int
lines_at_least(void *arg)
{
    char path[500];

    snprintf(path, sizeof(path), "%s/smtp-attempts.log", F.dir);
    return proc_count_lines(path, "@sendat>") >= (int)(intptr_t)arg;
}

static void
start_sink(char *url, size_t cap)
{
    fx_smtp_sink(&F, &sink, url, cap);
    snprintf(maildir, sizeof(maildir), "%s/maildir", F.dir);
}

static char *
parsed_mail(void)
{
    char script[400], out[65536], err[2048];
    const char *support = getenv("SENDAT_SUPPORT");
    char *argv[] = {"/usr/bin/python3", script, maildir, NULL};

    snprintf(script, sizeof(script), "%s/mail_parse.py", support ? support : "tests/support");
    assert_int_equal(proc_run(argv, NULL, NULL, out, sizeof(out), err, sizeof(err), 30000), 0);
    return strdup(out);
}

static void
schedule_mail(const char *subject, char *id, size_t cap)
{
    char at[40], html[400];
    FILE *f;
    int64_t due = test_now_ms() + 1500;

    snprintf(html, sizeof(html), "%s/body.html", F.dir);
    f = fopen(html, "w");
    assert_non_null(f);
    fputs("<p>안녕하세요 <b>HTML</b></p>", f);
    fclose(f);
    snprintf(at, sizeof(at), "@%" PRId64 ".%03d", due / 1000, (int)(due % 1000));
    assert_int_equal(fx_sendat(&F, id, cap, NULL, 0, "schedule", "--at", at, "--email",
                               "a@example.test, 김철수 <kim@example.test>", "--cc",
                               "c@example.test", "--bcc", "hidden@example.test", "--subject",
                               subject, "--text", "plain body 한글 text", "--html-file", html,
                               "--from", "Sendat Test <noreply@example.test>", NULL),
                     0);
    id[strcspn(id, "\n")] = '\0';
}

static void
test_mail_arrives_intact(void **state)
{
    char url[200], id1[80], id2[80], *mail, *line;
    char *env[] = {url, "SENDAT_SMTP_TLS=off", "SENDAT_RETRY_BASE_MS=200", NULL};
    int seen = 0;

    (void)state;
    fx_start(&F, 0);
    start_sink(url, sizeof(url));
    fx_consumer(&F, 0, env);
    schedule_mail(SUBJECT, id1, sizeof(id1));
    schedule_mail("retry me [tempfail]", id2, sizeof(id2));
    assert_true(wait_until(lines_at_least, (void *)(intptr_t)3, 60000)); /* 250, 451, 250 */
    mail = parsed_mail();
    for (line = strtok(mail, "\n"); line; line = strtok(NULL, "\n")) {
        seen++;
        assert_non_null(strstr(line, "\"to\": \"a@example.test, 김철수 <kim@example.test>\""));
        assert_non_null(strstr(line, "\"cc\": \"c@example.test\""));
        assert_non_null(strstr(line, "\"has_bcc_header\": false"));
        assert_non_null(strstr(line, "\"hidden@example.test\"")); /* in the envelope only */
        assert_non_null(strstr(line, "\"from\": \"Sendat Test <noreply@example.test>\""));
        assert_non_null(strstr(line, "\"content_type\": \"multipart/alternative\""));
        assert_non_null(strstr(line, "\"text\": \"plain body 한글 text"));
        assert_non_null(strstr(line, "<b>HTML</b>"));
        assert_non_null(strstr(line, "\"date\": \""));
        if (strstr(line, "tempfail"))
            assert_non_null(strstr(line, id2));
        else
            assert_non_null(strstr(line, "\"subject\": \"" SUBJECT "\""));
    }
    assert_int_equal(seen, 2);
    free(mail);
    /* the mail server's reply code, named as such (issue 34: it read http_status=250) */
    assert_true(fx_status_says(&F, id1, "smtp_status=250", 20000));
    {
        char st[8192];
        assert_int_equal(fx_sendat(&F, st, sizeof(st), NULL, 0, "status", id1, NULL), 0);
        assert_null(strstr(st, "http_status"));
    }
    { /* the refused attempt and the accepted one carried the same Message-ID */
        char path[500], want[200], *log;
        snprintf(path, sizeof(path), "%s/smtp-attempts.log", F.dir);
        log = proc_read_file(path);
        snprintf(want, sizeof(want), "451 <%s@sendat>\n", id2);
        assert_non_null(strstr(log, want));
        snprintf(want, sizeof(want), "250 <%s@sendat>\n", id2);
        assert_non_null(strstr(log, want));
        free(log);
    }
    { /* three messages, fewer connections: the SMTP session is reused (one, unless a busy
       * machine put two sends in flight at once, each on a connection of its own) */
        char path[500];
        snprintf(path, sizeof(path), "%s/smtp-attempts.log", F.dir);
        assert_true(proc_count_lines(path, "EHLO") < 3);
    }
    assert_int_equal(fx_stop_consumers(&F), 0);
    proc_signal(&sink, SIGTERM);
    proc_wait(&sink, 10000);
    fx_stop(&F);
}

/* 400 To addresses (the header was one 9 KB line) and a 300-character Korean subject (over
 * 998 bytes encoded) arrive folded, and read back exactly as scheduled. */
static void
test_folded_headers_arrive_intact(void **state)
{
    char url[200], id[80], at[40], subject[1024] = "", *to = malloc(400 * 48),
                                   *want = malloc(400 * 48 + 64);
    char *env[] = {url, "SENDAT_SMTP_TLS=off", NULL}, *mail, log_want[200], path[500], *log;
    int64_t due = test_now_ms() + 1500;
    size_t used = 0;

    (void)state;
    for (int i = 0; i < 50; i++)
        strcat(subject, i < 49 ? "안녕하세요 " : "안녕하세요끝"); /* 300 characters */
    for (int i = 0; i < 400; i++)
        used += (size_t)sprintf(
            to + used, i % 3 ? "%suser%03d@example.test" : "%sName %03d <user%03d@example.test>",
            i ? ", " : "", i, i);
    snprintf(want, 400 * 48 + 64, "\"to\": \"%s\"", to);
    fx_start(&F, 0);
    start_sink(url, sizeof(url));
    fx_consumer(&F, 0, env);
    snprintf(at, sizeof(at), "@%" PRId64 ".%03d", due / 1000, (int)(due % 1000));
    assert_int_equal(fx_sendat(&F, id, sizeof(id), NULL, 0, "schedule", "--at", at, "--email", to,
                               "--subject", subject, "--text", "folded", "--from",
                               "noreply@example.test", NULL),
                     0);
    id[strcspn(id, "\n")] = '\0';
    assert_true(wait_until(lines_at_least, (void *)(intptr_t)1, 60000));
    snprintf(path, sizeof(path), "%s/smtp-attempts.log", F.dir);
    log = proc_read_file(path);
    snprintf(log_want, sizeof(log_want), "250 <%s@sendat>\n", id);
    if (!strstr(log, log_want))
        fail_msg("the SMTP server did not take the message: %s", log);
    free(log);
    mail = parsed_mail();
    assert_non_null(strstr(mail, want));
    snprintf(want, 400 * 48 + 64, "\"subject\": \"%s\"", subject);
    assert_non_null(strstr(mail, want));
    assert_non_null(strstr(mail, "\"user399@example.test\"]")); /* the 400th in the envelope */
    free(mail);
    free(to);
    free(want);
    assert_int_equal(fx_stop_consumers(&F), 0);
    proc_signal(&sink, SIGTERM);
    proc_wait(&sink, 10000);
    fx_stop(&F);
}

/* A To field that folds to more than 64 KiB: refused at the producer, exit 2. */
static void
refuse_long_to(void)
{
    char out[256], err[512], *to = malloc(400 * 256);
    size_t used = 0;

    for (int i = 0; i < 400; i++)
        used += (size_t)sprintf(
            to + used,
            "%sA Rather Long Display Name For Recipient Number %03d Of Four Hundred "
            "In This List Long Enough That Four Hundred Pass 64 KiB And Then Some "
            "More Words To Be Sure <user%03d@example.test>",
            i ? ", " : "", i, i);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--at", "+1h",
                               "--email", to, "--subject", "s", "--text", "y", NULL),
                     2);
    assert_non_null(strstr(err, "the To header would be longer than 65536 bytes"));
    free(to);
}

static void
test_refusals(void **state)
{
    char out[256], err[512];
    char *argv[] = {(char *)fx_consumer_bin(), NULL};
    char *env[] = {F.env_url, F.env_key, "SENDAT_SMTP_URL=smtp://mail.example.test:587",
                   "SENDAT_SMTP_TLS=off", NULL};

    (void)state;
    fx_start(&F, 0);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--at", "+1h",
                               "--email", "not-an-address", "--subject", "x", "--text", "y", NULL),
                     2);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--at", "+1h",
                               "--email", "a@example.test", "--subject",
                               "x\r\nBcc: evil@example.test", "--text", "y", NULL),
                     2);
    assert_non_null(strstr(err, "CR or LF"));
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--at", "+1h",
                               "--email", "a@example.test", "--subject", "bell\a and \x1b[2J",
                               "--text", "y", NULL),
                     2); /* sent labelled UTF-8: control bytes and Latin-1 are refused */
    assert_non_null(strstr(err, "subject has a control byte or broken UTF-8"));
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--at", "+1h",
                               "--email", "a@example.test", "--subject", "caf\xe9", "--text", "y",
                               NULL),
                     2);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--at", "+1h",
                               "--email", "a@example.test", "--text", "y", NULL),
                     2);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--at", "+1h",
                               "--email", "a@example.test", "--subject", "s", "--text", "y",
                               "--from", "Bad <x>", NULL),
                     2);
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "schedule", "--at", "+1h",
                               "--email", "a@evil.example.net@example.org", "--subject", "s",
                               "--text", "y", NULL),
                     2);
    assert_non_null(strstr(err, "recipient 1 of To: more than one @"));
    assert_null(strstr(err, "evil")); /* the reason names the field, never the address */
    refuse_long_to();
    assert_int_equal(proc_run(argv, env, NULL, out, sizeof(out), err, sizeof(err), 20000), 2);
    assert_non_null(strstr(err, "only a loopback server may go without TLS"));
    fx_stop(&F);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mail_arrives_intact),
        cmocka_unit_test(test_folded_headers_arrive_intact),
        cmocka_unit_test(test_refusals),
    };

    return FX_RUN(tests);
}
