/* Reserved loopback ports (ports.h). A reservation is an flock on the file
 * TMPDIR/sendat-test-ports/PORT, held open until the reserving process exits (the kernel then
 * drops the lock, also after a crash). Ports are tried from a random start in [PORT_LOW, the
 * ephemeral range's start). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ports.h"

#define PORT_LOW 12000
#define PORT_HIGH_DEFAULT 32768 /* Linux's default first ephemeral port */

/* The first port the kernel hands out for port-0 binds and outgoing connections. */
static int
ephemeral_low(void)
{
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
    int low = PORT_HIGH_DEFAULT;

    if (f) {
        if (fscanf(f, "%d", &low) != 1 || low <= PORT_LOW + 100)
            low = PORT_HIGH_DEFAULT;
        fclose(f);
    }
    return low;
}

static void
lock_dir(char *dir, size_t size)
{
    const char *tmp = getenv("TMPDIR");

    snprintf(dir, size, "%s/sendat-test-ports", tmp && *tmp ? tmp : "/tmp");
    (void)mkdir(dir, 0777);
}

/* The open lock file of port, locked for this process (kept open: the lock ends with the
 * process), or -1 when another process holds it. */
static int
lock_port(const char *dir, int port)
{
    char path[400];
    int fd;

    snprintf(path, sizeof(path), "%s/%d", dir, port);
    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* 1 when 127.0.0.1:port can be bound now (by a server that is not a test's). */
static int
bindable(int port)
{
    struct sockaddr_in a;
    int fd = socket(AF_INET, SOCK_STREAM, 0), ok;

    if (fd < 0)
        return 0;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((uint16_t)port);
    ok = bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
    close(fd);
    return ok;
}

int
port_reserve(void)
{
    static unsigned seed;
    char dir[300];
    int high = ephemeral_low(), span = high - PORT_LOW, start;

    if (!seed)
        seed = (unsigned)getpid() ^ (unsigned)time(NULL);
    lock_dir(dir, sizeof(dir));
    start = (int)(rand_r(&seed) % (unsigned)span);
    for (int i = 0; i < span; i++) {
        int port = PORT_LOW + (start + i) % span;

        int fd = lock_port(dir, port);

        if (fd < 0)
            continue;
        if (bindable(port))
            return port;
        close(fd);
    }
    return -1;
}
