/* Parsing listen addresses (see listen.h). */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "listen.h"

enum sa_code
sa_listen_parse(const char *var, const char *addr, struct sockaddr_in *sin, struct sa_err *err)
{
    const char *colon = strrchr(addr, ':');
    char host[64] = "0.0.0.0";
    long port;
    char *end;

    memset(sin, 0, sizeof(*sin));
    sin->sin_family = AF_INET;
    if (!colon || (size_t)(colon - addr) >= sizeof(host))
        return sa_fail(err, SA_EINVAL, "%s=%s: want host:port, :port or off", var, addr);
    if (colon > addr)
        snprintf(host, sizeof(host), "%.*s", (int)(colon - addr), addr);
    port = strtol(colon + 1, &end, 10);
    if (!colon[1] || *end || port < 0 || port > 65535 ||
        inet_pton(AF_INET, host, &sin->sin_addr) != 1)
        return sa_fail(err, SA_EINVAL, "%s=%s: want an IPv4 host and a port", var, addr);
    sin->sin_port = htons((uint16_t)port);
    return SA_OK;
}
