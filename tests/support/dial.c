/* Test clients from a chosen loopback source address: the source is bound before connecting,
 * so 127.0.0.2 and 127.0.1.7 are different clients to a server with per-address limits. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "dial.h"

int
dial_from(const char *src, int port, int flags)
{
    struct sockaddr_in from = {.sin_family = AF_INET}, to = {.sin_family = AF_INET};
    int type = SOCK_STREAM | (flags & DIAL_NONBLOCK ? SOCK_NONBLOCK : 0);
    int s = socket(AF_INET, type, 0);

    if (s < 0 || inet_pton(AF_INET, src, &from.sin_addr) != 1 ||
        bind(s, (struct sockaddr *)&from, sizeof(from)) != 0) {
        fprintf(stderr, "dial from %s: %s\n", src, strerror(errno));
        if (s >= 0)
            close(s);
        return -1;
    }
    inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    to.sin_port = htons((uint16_t)port);
    if (connect(s, (struct sockaddr *)&to, sizeof(to)) == 0 ||
        (flags & DIAL_NONBLOCK && errno == EINPROGRESS))
        return s;
    if (flags & DIAL_NONBLOCK)
        fprintf(stderr, "dial from %s to port %d: %s\n", src, port, strerror(errno));
    close(s);
    return -1;
}

int
dial_spread(const char *net, int i, int each, int port)
{
    char src[32];

    snprintf(src, sizeof(src), "%s.%d", net, 1 + i / each);
    return dial_from(src, port, DIAL_NONBLOCK);
}

int
dial_readable(int s, int ms)
{
    struct pollfd p = {.fd = s, .events = POLLIN};

    return poll(&p, 1, (int)(ms * test_timeout_multiplier())) == 1;
}

int
dial_raise_fd_limit(long need)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 0;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < (rlim_t)need)
        return 0;
    rl.rlim_cur = rl.rlim_max;
    return setrlimit(RLIMIT_NOFILE, &rl) == 0;
}
