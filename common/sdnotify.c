/* sd_notify's wire format is a datagram of newline-separated KEY=VALUE lines on an AF_UNIX
 * socket; this is all of it that sendat uses, so the binaries need no libsystemd. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "sdnotify.h"

enum sa_code
sa_sdnotify(const char *state, struct sa_err *err)
{
    const char *path = getenv("NOTIFY_SOCKET");
    struct sockaddr_un sun;
    size_t len;
    socklen_t alen;
    ssize_t sent;
    int fd;

    if (!path || !*path)
        return SA_OK;
    len = strlen(path);
    if (len >= sizeof(sun.sun_path) || (path[0] != '/' && path[0] != '@'))
        return sa_fail(err, SA_EINVAL, "NOTIFY_SOCKET=%s: not a socket path", path);
    memset(&sun, 0, sizeof(sun));
    sun.sun_family = AF_UNIX;
    memcpy(sun.sun_path, path, len);
    if (path[0] == '@')
        sun.sun_path[0] = '\0'; /* an abstract name: no terminating NUL counted */
    alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (path[0] == '/'));
    fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return sa_fail(err, SA_ERETRY, "notify socket: %s", strerror(errno));
    sent = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sun, alen);
    close(fd);
    if (sent < 0)
        return sa_fail(err, SA_ERETRY, "notify %s: %s", path, strerror(errno));
    return SA_OK;
}
