/* Listen addresses of the binaries' HTTP endpoints: "host:port" or ":port" (every IPv4
 * interface), as in SENDAT_HTTP_ADDR and SENDAT_API_ADDR. */
#ifndef SA_LISTEN_H
#define SA_LISTEN_H

#include <netinet/in.h>

#include "sa_err.h"

/* Parses addr into sin. SA_EINVAL names var (the variable the value came from) and says what
 * is wanted. */
enum sa_code sa_listen_parse(const char *var, const char *addr, struct sockaddr_in *sin,
                             struct sa_err *err) SA_MUST_CHECK;

#endif
