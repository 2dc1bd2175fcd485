/* The deployment for test_roles*.c: node configs read from deploy/nats with their includes
 * inlined and only ports, store and monitoring port moved onto loopback (a deploy file that
 * changed shape fails the test), the cluster they make, a key, init as admin and a receiver,
 * started once for every test; and acting as one of the three roles. */
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
#include "roles.h"

#define API_WAIT_MS 2000 /* a refused JetStream request only times out */

struct fx F;
static int started, up; /* started: roles_stop has work; up: every test may use F */

static const struct role {
    const char *user, *password;
} roles[] = {
    {"admin", "test-admin-pw"}, {"producer", "test-producer-pw"}, {"consumer", "test-consumer-pw"}};

static const struct role *
role(const char *user)
{
    for (size_t i = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
        if (!strcmp(roles[i].user, user))
            return &roles[i];
    fail_msg("no role %s", user);
    return NULL;
}

const char *
roles_password(const char *user)
{
    return role(user)->password;
}

/* sendat (fx_sendat) runs with our environment: from now on as this user. */
void
roles_act_as(const char *user)
{
    setenv("SENDAT_NATS_USER", user, 1);
    setenv("SENDAT_NATS_PASSWORD", role(user)->password, 1);
}

/* deploy/nats/name with every `include ./X` line replaced by the file X beside it. */
static char *
read_inlined(const char *name)
{
    const char *deploy = getenv("SENDAT_DEPLOY");
    char path[600], inc[128], *text, *at, *end, *inner, *joined;

    snprintf(path, sizeof(path), "%s/nats/%s", deploy ? deploy : "deploy", name);
    text = proc_read_file(path);
    if (!text)
        fail_msg("cannot read %s", path);
    for (int depth = 0; (at = strstr(text, "include ./")); depth++) {
        assert_true(depth < 8);
        end = at + strcspn(at, "\n");
        snprintf(inc, sizeof(inc), "%s/nats/%.*s", deploy ? deploy : "deploy", (int)(end - at - 10),
                 at + 10);
        inner = proc_read_file(inc);
        if (!inner)
            fail_msg("%s includes %s, which cannot be read", path, inc);
        joined = malloc(strlen(text) + strlen(inner) + 1);
        assert_non_null(joined);
        sprintf(joined, "%.*s%s%s", (int)(at - text), text, inner, end);
        free(inner);
        free(text);
        text = joined;
    }
    return text;
}

/* Replaces token in *text, which must hold it: a deploy file that changed shape fails here. */
static void
subst(char **text, const char *token, const char *value)
{
    char *next;

    if (!strstr(*text, token))
        fail_msg("deploy/nats no longer holds \"%s\": update tests/it/roles.c", token);
    next = natsd_replace(*text, token, value);
    assert_non_null(next);
    free(*text);
    *text = next;
}

/* Node i (1..3) as the deployment runs it, moved onto loopback and into a private folder. */
static char *
node_config(int i)
{
    char name[16], token[32], value[32], *t;

    snprintf(name, sizeof(name), "n%d.conf", i);
    t = read_inlined(name);
    subst(&t, "/data/jetstream", "$DIR/js");
    subst(&t, "http_port: 8222", "http_port: -1");
    snprintf(value, sizeof(value), "listen: 127.0.0.1:$ROUTE_PORT%d", i);
    subst(&t, "listen: 0.0.0.0:6222", value);
    for (int k = 1; k <= 3; k++) {
        snprintf(token, sizeof(token), "//n%d:6222", k);
        snprintf(value, sizeof(value), "//127.0.0.1:$ROUTE_PORT%d", k);
        subst(&t, token, value);
    }
    return t;
}

static void
start_cluster(void)
{
    const char *text[3];
    char *conf[3];

    setenv("SENDAT_ADMIN_PASSWORD", role("admin")->password, 1); /* what nats-server reads */
    setenv("SENDAT_PRODUCER_PASSWORD", role("producer")->password, 1);
    setenv("SENDAT_CONSUMER_PASSWORD", role("consumer")->password, 1);
    for (int i = 0; i < 3; i++)
        text[i] = conf[i] = node_config(i + 1);
    assert_int_equal(natsd_cluster_start_config(&F.cluster, text, "admin", role("admin")->password),
                     0);
    for (int i = 0; i < 3; i++)
        free(conf[i]);
    F.clustered = 1;
}

/* Once for every test: the cluster, a key, init as admin, the receiver. */
void
roles_start_once(void)
{
    char out[256], err[1024];

    if (up)
        return;
    if (started)
        fail_msg("the deployment did not start (see the first test)");
    memset(&F, 0, sizeof(F));
    assert_int_equal(test_mkdtemp(F.dir, sizeof(F.dir)), 0);
    snprintf(F.key, sizeof(F.key), "%s/sendat.key", F.dir);
    started = 1; /* from here on roles_stop cleans up */
    start_cluster();
    snprintf(F.env_url, sizeof(F.env_url), "SENDAT_NATS_URL=%s", F.cluster.urls);
    snprintf(F.env_key, sizeof(F.env_key), "SENDAT_KEY_FILE=%s", F.key);
    setenv("SENDAT_NATS_URL", F.cluster.urls, 1);
    setenv("SENDAT_KEY_FILE", F.key, 1);
    roles_act_as("admin");
    assert_int_equal(fx_sendat(&F, out, sizeof(out), err, sizeof(err), "keygen", F.key, NULL), 0);
    if (fx_sendat(&F, out, sizeof(out), err, sizeof(err), "init", "--replicas", "3", "--window",
                  "10s", "--slot", "2s", "--lead", "1s", "--ack-wait", "5s", NULL) != 0)
        fail_msg("sendat init as admin: %s", err);
    assert_int_equal(receiver_start(&F.recv), 0);
    up = 1;
}

/* Consumer i with the credentials of user (its environment, not ours). */
void
roles_consumer_as(int i, const char *user)
{
    static char env_user[FX_MAX_CONSUMERS][64], env_pass[FX_MAX_CONSUMERS][128];
    char *env[4] = {env_user[i], env_pass[i], "SENDAT_SWEEP_INTERVAL=1s", NULL};

    snprintf(env_user[i], sizeof(env_user[i]), "SENDAT_NATS_USER=%s", user);
    snprintf(env_pass[i], sizeof(env_pass[i]), "SENDAT_NATS_PASSWORD=%s", role(user)->password);
    fx_consumer(&F, i, env);
}

/* js with requests that give up after API_WAIT_MS (a refused one is never answered). */
void
roles_connect_js(const char *user, natsConnection **nc, jsCtx **js)
{
    jsOptions o;

    jsOptions_Init(&o);
    o.Wait = (int64_t)(API_WAIT_MS * test_timeout_multiplier());
    assert_int_equal(natsd_connect(nc, F.cluster.urls, user, role(user)->password), NATS_OK);
    assert_int_equal(natsConnection_JetStream(js, *nc, &o), NATS_OK);
}

int
roles_stop(void **state)
{
    (void)state;
    if (started)
        fx_stop(&F);
    return 0;
}

int
roles_consumer_ready(void *arg)
{
    static char body[FX_BODY_MAX];

    return fx_consumer_get(&F, (int)(intptr_t)arg, "/readyz", body) == 200;
}

void
roles_fleet_up(void)
{
    roles_start_once();
    roles_consumer_as(0, "consumer");
    roles_consumer_as(1, "consumer");
    for (intptr_t i = 0; i < 2; i++)
        assert_true(wait_until(roles_consumer_ready, (void *)i, 30000));
}

void
roles_books(const char *prefix, int in_ms, int step_ms, char (*ids)[80])
{
    char path[32];
    int64_t start;

    roles_start_once();
    roles_act_as("producer");
    start = test_now_ms() + in_ms;
    for (int k = 0; k < ROLES_N_TASKS; k++) {
        snprintf(path, sizeof(path), "%s/%d", prefix, k);
        assert_int_equal(fx_schedule(&F, start + k * step_ms, path, ids[k], sizeof(ids[k])), 0);
    }
}

void
roles_fleet_books(const char *prefix, int in_ms, int step_ms, char (*ids)[80])
{
    roles_fleet_up();
    roles_books(prefix, in_ms, step_ms, ids);
}
