/* Error codes and messages shared by every module: the code drives the decision (retry,
 * dead-letter, exit status), the message goes to people. */
#ifndef SA_ERR_H
#define SA_ERR_H

#define SA_MUST_CHECK __attribute__((warn_unused_result))
#define SA_PRINTF(a, b) __attribute__((format(printf, a, b)))

enum sa_code {
    SA_OK = 0,
    SA_EINVAL,    /* bad input: never retried */
    SA_ENOMEM,    /* out of memory: nak, never drop */
    SA_ENATS,     /* broker said no or did not answer */
    SA_ECRYPTO,   /* envelope does not open: forged, tampered or unknown key */
    SA_ERETRY,    /* temporary failure: back off and try again */
    SA_EPERM,     /* permanent failure: dead-letter */
    SA_ENOTFOUND, /* no such thing (an id, a series, a dead letter) */
    SA_EEXIST,
    SA_ECONFLICT, /* the name is taken by something else */
    SA_EFULL,     /* a task stream holds its size limit: nothing new is booked (issue 24.6) */
};

struct sa_err {
    enum sa_code code;
    char msg[256];
    char field[48]; /* the input field the failure concerns ("at", a JSON key), or "" */
};

/* Records the first failure in err (which may be NULL) and returns code. */
enum sa_code sa_fail(struct sa_err *err, enum sa_code code, const char *fmt, ...) SA_PRINTF(3, 4);

/* sa_fail that also names the input field the failure concerns (doors report it as such:
 * the API's "field"; nobody reads it back out of the message). */
enum sa_code sa_fail_field(struct sa_err *err, enum sa_code code, const char *field,
                           const char *fmt, ...) SA_PRINTF(4, 5);

/* Names field on bad input a callee refused without naming one (err's code is SA_EINVAL and
 * its field still ""); returns code, so a caller writes `return sa_err_field(err, rc, "at")`. */
enum sa_code sa_err_field(struct sa_err *err, enum sa_code code, const char *field);

/* Clears err so the next sa_fail is kept. */
void sa_err_clear(struct sa_err *err);

#endif
