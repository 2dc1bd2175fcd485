/* See rawmeter.h. This process's CPU comes from getrusage, a server's from /proc/PID/stat
 * (0 if it cannot be read): the phases are timed by rawpost_now_s, this only counts CPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "rawmeter.h"

#define SERVER_PIDS_MAX 8
static long server_pid[SERVER_PIDS_MAX];
static int n_server_pids;

static double
self_cpu(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* One process's CPU seconds from /proc (0 if it cannot be read). */
static double
pid_cpu(long pid)
{
    char path[64], buf[1024], *p;
    unsigned long long ut = 0, st = 0;
    FILE *f;
    size_t n;

    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    if (!(f = fopen(path, "r")))
        return 0;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    if (!(p = strrchr(buf, ')')) ||
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return 0;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static double
server_cpu(void)
{
    double sum = 0;

    for (int i = 0; i < n_server_pids; i++)
        sum += pid_cpu(server_pid[i]);
    return sum;
}

void
rawmeter_server_pids(const char *list)
{
    for (const char *p = list; *p && n_server_pids < SERVER_PIDS_MAX;) {
        char *end;
        long pid = strtol(p, &end, 10);
        if (end == p)
            break;
        if (pid > 0)
            server_pid[n_server_pids++] = pid;
        p = *end == ',' ? end + 1 : end;
    }
}

static double mark_self, mark_server;

void
rawmeter_mark(void)
{
    mark_self = self_cpu();
    mark_server = server_cpu();
}

void
rawmeter_report(const char *name, long msgs, double secs, int *first)
{
    double cs = self_cpu() - mark_self, ss = server_cpu() - mark_server;

    printf("%s\"%s\":{\"msgs\":%ld,\"seconds\":%.3f,\"rate\":%.0f,\"cpu_us_per_msg\":%.1f",
           *first ? "" : ",", name, msgs, secs, secs > 0 ? (double)msgs / secs : 0.0,
           msgs ? cs * 1e6 / (double)msgs : 0.0);
    if (n_server_pids > 0)
        printf(",\"server_cpu_us_per_msg\":%.1f", msgs ? ss * 1e6 / (double)msgs : 0.0);
    printf("}");
    fprintf(stderr, "sendat-rawjs: %-21s %8ld msgs %7.3f s %9.0f msgs/s %6.1f us CPU/msg", name,
            msgs, secs, secs > 0 ? (double)msgs / secs : 0.0, msgs ? cs * 1e6 / (double)msgs : 0.0);
    if (n_server_pids > 0)
        fprintf(stderr, " (server %.1f us)", msgs ? ss * 1e6 / (double)msgs : 0.0);
    fputc('\n', stderr);
    *first = 0;
    fflush(stdout);
    rawmeter_mark();
}
