/* sendat serve: the producer role over HTTP for the applications that book sends (serve.c,
 * serve_routes.c). Configured from the environment like the consumer; SIGHUP reads the tokens
 * file and the key file again, SIGTERM/SIGINT finish the requests in progress and exit 0. Any
 * number may run behind a load balancer: each booking is one publish, ids are idempotency keys. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "cli.h"
#include "log.h"
#include "schedule.h"
#include "sdnotify.h"
#include "serve.h"

static const char usage[] =
    "usage: sendat serve\n"
    "  the HTTP API (JSON under /v1, bearer tokens from `sendat token create`). Environment:\n"
    "  SENDAT_API_ADDR         host:port or :port to listen on (default 127.0.0.1:8090; :0 any\n"
    "                          free port); plain HTTP elsewhere than loopback is refused\n"
    "  SENDAT_API_TLS_CERT, SENDAT_API_TLS_KEY   PEM files: serve HTTPS\n"
    "  SENDAT_API_INSECURE=1   allow plain HTTP on any address (behind a TLS proxy)\n"
    "  SENDAT_API_TOKENS_FILE  the tokens file (required; read again once changed, and on SIGHUP)\n"
    "  SENDAT_API_THREADS      requests served at once (default 8)\n"
    "  SENDAT_API_CLIENT_CONNECTIONS  connections one client address may hold (default 32)\n"
    "  SENDAT_API_REQUEST_TIMEOUT     seconds a client has to send a complete request head,\n"
    "                          from connecting or from its previous answer (default 10)\n"
    "  SENDAT_API_RATE         requests a second one token may make, bursts of as many\n"
    "                          (default 50; 0: no limit); more are answered 429\n"
    "  SENDAT_API_TOKEN_CONNECTIONS  requests one token may have under way at once, bodies\n"
    "                          being sent included (default 64); more are answered 429\n"
    "  SENDAT_API_TLS_PRIORITIES  GnuTLS priorities (default TLS 1.2 and later:\n"
    "                          NORMAL:-VERS-TLS1.0:-VERS-TLS1.1:-VERS-SSL3.0)\n"
    "  SENDAT_KEY_FILE         the key ring tasks are sealed with (read again on SIGHUP)\n"
    "  SENDAT_NATS_URL and the NATS credentials, as for every command\n";

/* The whole number in the variable name, def if unset, or -1 if it is not one in lo..hi. */
static int
int_from_env(const char *name, int def, int lo, int hi)
{
    const char *v = getenv(name);
    char *end = NULL;
    long n = v && *v ? strtol(v, &end, 10) : def;

    return (end && *end) || n < lo || n > hi ? -1 : (int)n;
}

static int
limits_from_env(struct serve_limits *lim)
{
    lim->per_client = int_from_env("SENDAT_API_CLIENT_CONNECTIONS", 32, 1, 1024);
    lim->head_s = int_from_env("SENDAT_API_REQUEST_TIMEOUT", 10, 1, 3600);
    lim->rate = int_from_env("SENDAT_API_RATE", 50, 0, 1000000);
    lim->per_token = int_from_env("SENDAT_API_TOKEN_CONNECTIONS", 64, 1, 1024);
    if (lim->per_client < 0)
        return cli_error(EXIT_USAGE, "serve: SENDAT_API_CLIENT_CONNECTIONS must be 1 to 1024");
    if (lim->head_s < 0)
        return cli_error(EXIT_USAGE, "serve: SENDAT_API_REQUEST_TIMEOUT must be 1 to 3600 s");
    if (lim->rate < 0)
        return cli_error(EXIT_USAGE, "serve: SENDAT_API_RATE must be 0 to 1000000");
    if (lim->per_token < 0)
        return cli_error(EXIT_USAGE, "serve: SENDAT_API_TOKEN_CONNECTIONS must be 1 to 1024");
    return EXIT_OK;
}

static void
reload(struct server *s, const struct cli *cli)
{
    struct sa_keyring *ring = NULL, *old;
    struct sa_err err = {0};

    if (serve_reload_tokens(s, &err) != SA_OK)
        sa_log(SA_LOG_ERROR, "reload_failed", "error=\"%s\" (the old tokens stay)", err.msg);
    if (cli_keyring(cli, &ring) != EXIT_OK)
        return; /* cli_keyring said why; the old keys stay */
    pthread_rwlock_wrlock(&s->ring_lock);
    old = s->ring;
    s->ring = ring;
    pthread_rwlock_unlock(&s->ring_lock);
    sa_keyring_free(old);
    sa_log(SA_LOG_INFO, "reloaded", "tokens=%zu", tokens_count(s->tokens));
}

/* Waits for signals in this thread (the server's threads have them blocked). */
static void
wait_for_signals(struct server *s, const struct cli *cli, const sigset_t *set)
{
    int sig = 0;

    while (sigwait(set, &sig) == 0) {
        if (sig == SIGHUP)
            reload(s, cli);
        else
            return;
    }
}

static int
run(struct server *s, const struct cli *cli, const char *addr, int threads,
    const struct serve_tls *tls, const struct serve_limits *lim)
{
    struct sa_err err = {0};
    sigset_t set;

    sigemptyset(&set);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* before any thread starts: they inherit it */
    if (serve_reload_tokens(s, &err) != SA_OK)
        return cli_error(EXIT_USAGE, "serve: %s", err.msg);
    if (serve_start(s, addr, threads, tls, lim, &err) != SA_OK)
        return cli_error(EXIT_USAGE, "serve: %s", err.msg);
    sa_log(SA_LOG_INFO, "api_listening", "addr=%s port=%u tls=%s tokens=%zu", addr, serve_port(s),
           tls->cert ? "on" : "off", tokens_count(s->tokens));
    if (sa_sdnotify("READY=1", &err) != SA_OK) /* systemd's Type=notify */
        sa_log(SA_LOG_WARN, "notify_failed", "error=\"%s\"", err.msg);
    wait_for_signals(s, cli, &set);
    if (sa_sdnotify("STOPPING=1", &err) != SA_OK)
        sa_log(SA_LOG_WARN, "notify_failed", "error=\"%s\"", err.msg);
    serve_stop(s);
    sa_log(SA_LOG_INFO, "stopped", "api=sendat-serve");
    return EXIT_OK;
}

/* SENDAT_API_TLS_CERT and SENDAT_API_TLS_KEY: both PEM files, or neither. */
static int
read_tls(struct serve_tls *tls)
{
    const char *cert = getenv("SENDAT_API_TLS_CERT"), *key = getenv("SENDAT_API_TLS_KEY");
    struct sa_err err = {0};
    size_t len = 0;

    if (!(cert && *cert) && !(key && *key))
        return EXIT_OK;
    if (!(cert && *cert) || !(key && *key))
        return cli_error(EXIT_USAGE, "serve: set both SENDAT_API_TLS_CERT and SENDAT_API_TLS_KEY");
    if (book_read_file(cert, 1 << 20, &tls->cert, &len, &err) != SA_OK)
        return cli_error(EXIT_USAGE, "serve: SENDAT_API_TLS_CERT: %s", err.msg);
    if (book_read_file(key, 1 << 20, &tls->key, &len, &err) != SA_OK)
        return cli_error(EXIT_USAGE, "serve: SENDAT_API_TLS_KEY: %s", err.msg);
    return EXIT_OK;
}

static void
free_tls(struct serve_tls *tls)
{
    if (tls->key)
        sodium_memzero(tls->key, strlen(tls->key));
    free(tls->key);
    free(tls->cert);
}

int
cmd_serve(int argc, char **argv)
{
    struct serve_tls tls = {0};
    struct serve_limits lim = {0};
    struct server s = {0};
    struct cli cli = {0};
    const char *addr = getenv("SENDAT_API_ADDR");
    int threads = int_from_env("SENDAT_API_THREADS", 8, 1, 256), code, rest = 0;
    const struct cli_opt none[] = {{0}}; /* configured from the environment only */
    enum cli_opts_result r = cli_opts_parse("serve", usage, none, argc, argv, &rest);

    if (r != CLI_OPTS_OK)
        return cli_opts_exit(r);
    if (rest < argc)
        return cli_error(EXIT_USAGE, "serve: takes no arguments (see sendat serve --help)");
    s.tokens_file = getenv("SENDAT_API_TOKENS_FILE");
    if (!s.tokens_file || !*s.tokens_file)
        return cli_error(EXIT_USAGE, "serve: set SENDAT_API_TOKENS_FILE (make tokens with "
                                     "`sendat token create --role producer`)");
    if (threads < 0)
        return cli_error(EXIT_USAGE, "serve: SENDAT_API_THREADS must be 1 to 256");
    if (limits_from_env(&lim) != EXIT_OK)
        return EXIT_USAGE;
    sa_log_init("sendat-serve");
    pthread_rwlock_init(&s.tokens_lock, NULL);
    pthread_mutex_init(&s.follow_lock, NULL);
    pthread_rwlock_init(&s.ring_lock, NULL);
    if ((code = read_tls(&tls)) == EXIT_OK && (code = cli_keyring(&cli, &s.ring)) == EXIT_OK &&
        (code = cli_connect(&cli, &s.n)) == EXIT_OK)
        code = run(&s, &cli, addr && *addr ? addr : "127.0.0.1:8090", threads, &tls, &lim);
    free_tls(&tls);
    cli_close(s.n);
    sa_keyring_free(s.ring);
    tokens_free(s.tokens);
    pthread_rwlock_destroy(&s.tokens_lock);
    pthread_mutex_destroy(&s.follow_lock);
    pthread_rwlock_destroy(&s.ring_lock);
    return code;
}
