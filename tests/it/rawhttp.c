/* Raw HTTP/1.1 over sockets for the hostile-client tests (rawhttp.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "api_client.h"
#include "check.h"
#include "dial.h"
#include "rawhttp.h"

int
rawhttp_api_port(void)
{
    return atoi(strrchr(base, ':') + 1);
}

int
rawhttp_exchange(int s, const char *text, int ms)
{
    char resp[512] = "";
    int status = 0;
    ssize_t n;

    if (send(s, text, strlen(text), MSG_NOSIGNAL) < 0)
        return -1;
    if (!dial_readable(s, ms))
        return 0;
    n = recv(s, resp, sizeof(resp) - 1, 0);
    if (n <= 0)
        return -1;
    sscanf(resp, "HTTP/1.%*d %d", &status);
    return status;
}

int
rawhttp_status_from(const char *from, int port, const char *request, int ms)
{
    int s = dial_from(from, port, 0), status;

    if (s < 0)
        return 0;
    status = rawhttp_exchange(s, request, ms);
    close(s);
    return status;
}

int
rawhttp_head_only(const char *method, const char *path, const char *token, long length)
{
    char req[512], auth[128] = "";

    if (token)
        snprintf(auth, sizeof(auth), "Authorization: Bearer %s\r\n", token);
    snprintf(req, sizeof(req),
             "%s /v1%s HTTP/1.1\r\nHost: 127.0.0.1\r\n%sContent-Type: application/json\r\n"
             "Content-Length: %ld\r\n\r\n",
             method, path, auth, length);
    return rawhttp_status_from("127.0.0.1", rawhttp_api_port(), req, 5000);
}

int
rawhttp_start_slow_body(int s, const char *token)
{
    char req[256];
    int n = snprintf(req, sizeof(req),
                     "GET /v1/whoami HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                     "Content-Length: 16000\r\n\r\n{",
                     token);

    for (int tries = 0; tries < 50; tries++) { /* a non-blocking connect may still be going */
        if (send(s, req, (size_t)n, MSG_NOSIGNAL) == n)
            return 1;
        usleep(10000);
    }
    return 0;
}

int
rawhttp_drip_until_closed(int *conns, int n, const char *drip, int ms)
{
    int64_t end = test_now_ms() + (int64_t)(ms * test_timeout_multiplier());
    int open = n;
    size_t len = strlen(drip);
    char buf[512];

    while (open > 0 && test_now_ms() < end) {
        open = 0;
        for (int i = 0; i < n; i++) {
            if (conns[i] < 0)
                continue;
            while (dial_readable(conns[i], 0) && recv(conns[i], buf, sizeof(buf), MSG_DONTWAIT) > 0)
                ; /* an answer (408, 429): the close follows */
            if (send(conns[i], drip, len, MSG_NOSIGNAL) < 0 ||
                (dial_readable(conns[i], 0) && recv(conns[i], buf, 1, MSG_DONTWAIT) <= 0)) {
                close(conns[i]);
                conns[i] = -1;
            } else {
                open++;
            }
        }
        usleep(300000);
    }
    return open == 0;
}

long
rawhttp_status_kib(const struct proc *p, const char *field)
{
    char path[64], *text, *at;
    long kib = -1;

    snprintf(path, sizeof(path), "/proc/%d/status", (int)p->pid);
    text = proc_read_file(path);
    if (text && (at = strstr(text, field)))
        kib = atol(at + strlen(field));
    free(text);
    return kib;
}
