/* A fleet member without SMTP settings (no SENDAT_SMTP_URL) leaves email tasks to members that
 * can send mail instead of dead-lettering them (issue 34 item 3): it parks them, says so in
 * /readyz and /metrics, and while no member can send mail the tasks wait and `sendat stats`
 * says so. Against the real SMTP sink (aiosmtpd). */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "check.h"
#include "fixture.h"

#define N 6

static struct fx F;
static struct proc sink;

static void
schedule_mails(char ids[N][80])
{
    char at[40];
    int64_t due = test_now_ms() + 1500;

    snprintf(at, sizeof(at), "@%" PRId64 ".%03d", due / 1000, (int)(due % 1000));
    for (int i = 0; i < N; i++) {
        assert_int_equal(fx_sendat(&F, ids[i], sizeof(ids[i]), NULL, 0, "schedule", "--at", at,
                                   "--email", "a@example.test", "--subject", "capability", "--text",
                                   "body", "--from", "noreply@example.test", NULL),
                         0);
        ids[i][strcspn(ids[i], "\n")] = '\0';
    }
}

/* Consumer 0 (no SMTP) has left every email task to the others at least once. */
static int
all_left(void *arg)
{
    (void)arg;
    return fx_consumer_metric(&F, 0, "sendat_mail_left_total") >= N;
}

static int
all_accepted(void *arg)
{
    char path[500];

    (void)arg;
    snprintf(path, sizeof(path), "%s/smtp-attempts.log", F.dir);
    return proc_count_lines(path, "250 <") >= N;
}

static void
stats(char *out, size_t cap)
{
    assert_int_equal(fx_sendat(&F, out, cap, NULL, 0, "stats", NULL), 0);
}

static void
assert_no_dead_letters(void)
{
    char out[16384];

    assert_int_equal(fx_sendat(&F, out, sizeof(out), NULL, 0, "stats", "--json", NULL), 0);
    assert_non_null(strstr(out, "\"dead_letters\":0"));
}

/* The member without SMTP says so where an operator looks. */
static void
assert_says_no_smtp(void)
{
    char body[FX_BODY_MAX];

    assert_int_equal(fx_consumer_get(&F, 0, "/readyz", body), 200);
    assert_non_null(strstr(body, "no SENDAT_SMTP_URL"));
    assert_int_equal(fx_consumer_metric(&F, 0, "sendat_can_send_mail"), 0);
}

static void
test_no_member_can_send(void **state)
{
    char ids[N][80], out[16384];

    (void)state;
    fx_start(&F, 0);
    fx_consumer(&F, 0, NULL);
    schedule_mails(ids);
    assert_true(wait_until(all_left, NULL, 30000));
    assert_says_no_smtp();
    stats(out, sizeof(out));
    if (!strstr(out, "no member alive can send mail"))
        fail_msg("stats does not say mail waits:\n%s", out);
    assert_non_null(strstr(out, "no SMTP (leaves email to the others)"));
    assert_no_dead_letters();
    for (int i = 0; i < N; i++) { /* waiting, not dead-lettered */
        char st[4096];
        assert_int_equal(fx_sendat(&F, st, sizeof(st), NULL, 0, "status", ids[i], NULL), 0);
        assert_null(strstr(st, "dead"));
    }
    fx_finish(&F);
}

static void
test_left_to_member_with_smtp(void **state)
{
    char ids[N][80], url[200], out[16384], path[500], want[600], *log;
    char *env[] = {url, "SENDAT_SMTP_TLS=off", NULL};

    (void)state;
    fx_start(&F, 0);
    fx_smtp_sink(&F, &sink, url, sizeof(url));
    fx_consumer(&F, 0, NULL); /* alone at first: it picks up every task */
    schedule_mails(ids);
    assert_true(wait_until(all_left, NULL, 30000));
    fx_consumer(&F, 1, env);
    if (!wait_until(all_accepted, NULL, 90000)) {
        fx_print_log(&F, 0);
        fx_print_log(&F, 1);
        fail_msg("not every email was accepted by the SMTP sink");
    }
    snprintf(path, sizeof(path), "%s/smtp-attempts.log", F.dir);
    log = proc_read_file(path);
    for (int i = 0; i < N; i++) { /* each once */
        const char *at;
        snprintf(want, sizeof(want), "250 <%s@sendat>\n", ids[i]);
        assert_non_null(at = strstr(log, want));
        assert_null(strstr(at + 1, want));
        assert_true(fx_status_says(&F, ids[i], "sent", 20000));
    }
    free(log);
    assert_says_no_smtp();
    stats(out, sizeof(out));
    if (!strstr(out, "1 of 2 members alive can send mail"))
        fail_msg("stats does not say who can send mail:\n%s", out);
    assert_no_dead_letters();
    assert_int_equal(fx_stop_consumers(&F), 0);
    assert_int_equal(fx_counter(&F, 0, "dead"), 0);
    assert_int_equal(fx_counter(&F, 1, "dead"), 0);
    proc_signal(&sink, SIGTERM);
    proc_wait(&sink, 10000);
    fx_stop(&F);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_member_can_send),
        cmocka_unit_test(test_left_to_member_with_smtp),
    };

    return FX_RUN(tests);
}
