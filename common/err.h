/* Error codes and messages shared by every module: the code drives the decision (retry,
 * dead-letter, exit status), the message goes to people. */
#ifndef SA_ERR_H
#define SA_ERR_H

#define SA_MUST_CHECK __attribute__((warn_unused_result))
#define SA_PRINTF(a, b) __attribute__((format(printf, a, b)))

enum sa_code {
    SA_OK = 0,
    SA_EINVAL,  /* bad input: never retried */
    SA_ENOMEM,  /* out of memory: nak, never drop */
    SA_ENATS,   /* broker said no or did not answer */
    SA_ECRYPTO, /* envelope does not open: forged, tampered or unknown key */
    SA_ERETRY,  /* temporary failure: back off and try again */
    SA_EPERM,   /* permanent failure: dead-letter */
    SA_ENOTFOUND,
    SA_EEXIST,
    SA_ECONFLICT, /* the name is taken by something else */
};

struct sa_err {
    enum sa_code code;
    char msg[256];
};

/* Records the first failure in err (which may be NULL) and returns code. */
enum sa_code sa_fail(struct sa_err *err, enum sa_code code, const char *fmt, ...) SA_PRINTF(3, 4);

/* Clears err so the next sa_fail is kept. */
void sa_err_clear(struct sa_err *err);

#endif
