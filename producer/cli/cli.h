/* What every producer command shares: exit codes and the one-line error (cli_exit.h), the
 * connection and the key ring taken from flags or the environment. */
#ifndef CLI_H
#define CLI_H

#include "cli_exit.h"
#include "cli_opts.h"
#include "sa_err.h"
#include "keyring.h"
#include "natsconn.h"

/* Flags every connecting command takes (--server, --key-file, --json). */
struct cli {
    const char *server;
    const char *key_file;
    int json;
};

/* Prints "unknown id" on stdout and returns EXIT_UNKNOWN (an id no task can have, or has). */
int cli_unknown_id(void);

/* The start of a command on one id (cancel, status, series pause): reads `VERB ID
 * [--server URL]` (and --json if with_json) into c and *id, answers "unknown id" for an id no
 * task can have, then cli_connect. Returns 1 with *n connected when the command goes on, or 0 when
 * it ends here with exit code *code (help printed, bad flags, unknown id, no connection). */
int cli_id_start(int argc, char **argv, const char *usage, int with_json, struct cli *c,
                 const char **id, struct sa_nats **n, int *code);

/* Option table rows (cli_opts.h) for the flags struct cli holds. */
#define CLI_OPT_SERVER(c)                                                                          \
    {                                                                                              \
        .name = "server", .kind = CLI_OPT_STRING, .to = &(c)->server                               \
    }
#define CLI_OPT_KEY_FILE(c)                                                                        \
    {                                                                                              \
        .name = "key-file", .kind = CLI_OPT_STRING, .to = &(c)->key_file                           \
    }
#define CLI_OPT_JSON(c)                                                                            \
    {                                                                                              \
        .name = "json", .kind = CLI_OPT_FLAG, .to = &(c)->json                                     \
    }

/* cli_error returning CLI_OPTS_BAD: for the checks a command's parser makes after
 * cli_opts_parse (words missing, options that do not go together). */
enum cli_opts_result cli_bad(const char *fmt, ...) SA_PRINTF(1, 2);

/* The exit code for an sa_code: EXIT_USAGE for bad input, EXIT_TAKEN for SA_ECONFLICT,
 * EXIT_FAIL otherwise. */
int cli_exit_for(enum sa_code rc);

/* Connects and binds the buckets; on failure prints the reason and returns an exit code. */
int cli_connect(const struct cli *c, struct sa_nats **n);

/* Closes n (NULL is fine). If the server refused this user a subject on the way, says so
 * first: the command's own error is then only a timeout, and this names the subject. */
void cli_close(struct sa_nats *n);

/* What a connecting command does once connected, with its own options: an exit code. */
typedef int (*cli_run_fn)(void *opts, struct sa_nats *n);
/* The rest of a connecting command once its parser returned r: the exit code for r unless it
 * is CLI_OPTS_OK, else connects with c, returns run(opts, n)'s code and closes. */
int cli_run(enum cli_opts_result r, const struct cli *c, cli_run_fn run, void *opts);

/* Loads the key ring from --key-file or SENDAT_KEY_FILE; prints the reason on failure. */
int cli_keyring(const struct cli *c, struct sa_keyring **ring);

/* The key ring if one is configured and loads, else NULL (quietly): for commands that work
 * without it. A ring loaded also checks the MACs of the claim records read (claimmac.h);
 * without one they read as unverified. */
struct sa_keyring *cli_keyring_optional(const struct cli *c);

/* For a command that writes claim or cancel records but seals nothing (cancel, series pause
 * and resume): loads the key ring only to make the records' MACs (common/claimmac.h). */
int cli_claim_keys(const struct cli *c);

/* Command entry points: argv[0] is the command name. */
int cmd_init(int argc, char **argv);
int cmd_keygen(int argc, char **argv);
int cmd_schedule(int argc, char **argv);
int cmd_cancel(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_series(int argc, char **argv);
int cmd_dlq(int argc, char **argv);
int cmd_preview(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_group(int argc, char **argv);
int cmd_token(int argc, char **argv);
int cmd_serve(int argc, char **argv);

#endif
