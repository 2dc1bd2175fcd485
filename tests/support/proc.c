/* Spawning, waiting and cleaning up child processes. Every child leads its own process group
 * (setpgid in parent and child, as ct does) so a whole tree can be signalled at once. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "proc.h"

#define TRACK_MAX 256

static pid_t tracked[TRACK_MAX];
static int atexit_set;

static void
kill_tracked(void)
{
    for (int i = 0; i < TRACK_MAX; i++)
        if (tracked[i] > 0)
            kill(-tracked[i], SIGKILL);
}

void
proc_track(pid_t pgid)
{
    if (!atexit_set) {
        atexit(kill_tracked);
        atexit_set = 1;
    }
    for (int i = 0; i < TRACK_MAX; i++)
        if (tracked[i] == 0) {
            tracked[i] = pgid;
            return;
        }
}

void
proc_forget(pid_t pgid)
{
    for (int i = 0; i < TRACK_MAX; i++)
        if (tracked[i] == pgid)
            tracked[i] = 0;
}

static void
child_exec(char *const argv[], char *const env_extra[], int in, int out, int err)
{
    setpgid(0, 0);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    for (int i = 0; env_extra && env_extra[i]; i++)
        putenv(env_extra[i]);
    execv(argv[0], argv);
    fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

static pid_t
spawn_fds(char *const argv[], char *const env_extra[], int in, int out, int err)
{
    pid_t pid = fork();

    if (pid == 0)
        child_exec(argv, env_extra, in, out, err);
    if (pid > 0) {
        setpgid(pid, pid);
        proc_track(pid);
    }
    return pid;
}

static int
spawn_in(struct proc *p, const char *dir, const char *name, char *const argv[],
         char *const env_extra[], const char *in_path)
{
    int in, out, err;

    memset(p, 0, sizeof(*p));
    snprintf(p->name, sizeof(p->name), "%s", name);
    snprintf(p->out_path, sizeof(p->out_path), "%s/%s.out", dir, name);
    snprintf(p->err_path, sizeof(p->err_path), "%s/%s.err", dir, name);
    in = open(in_path, O_RDONLY);
    out = open(p->out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    err = open(p->err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in >= 0 && out >= 0 && err >= 0)
        p->pid = spawn_fds(argv, env_extra, in, out, err);
    close(in);
    close(out);
    close(err);
    return p->pid > 0 ? 0 : -1;
}

int
proc_spawn(struct proc *p, const char *dir, const char *name, char *const argv[], char *const env_extra[])
{
    return spawn_in(p, dir, name, argv, env_extra, "/dev/null");
}

int
proc_signal(struct proc *p, int sig)
{
    return p->exited ? 0 : kill(p->pid, sig);
}

static int
code_of(int status)
{
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int
proc_wait(struct proc *p, int timeout_ms)
{
    int64_t deadline = test_now_ms() + (int64_t)(timeout_ms * test_timeout_multiplier());
    struct timespec tick = {0, 10 * 1000000L};
    int status;

    while (!p->exited) {
        pid_t r = waitpid(p->pid, &status, WNOHANG);
        if (r == p->pid) {
            p->exited = 1;
            p->status = code_of(status);
            proc_forget(p->pid);
            break;
        }
        if (r < 0 || test_now_ms() > deadline)
            return -1;
        nanosleep(&tick, NULL);
    }
    return p->status;
}

void
proc_kill9(struct proc *p)
{
    int status;

    if (p->exited || p->pid <= 0)
        return;
    kill(-p->pid, SIGKILL);
    if (waitpid(p->pid, &status, 0) == p->pid) {
        p->exited = 1;
        p->status = code_of(status);
    }
    proc_forget(p->pid);
}

int
proc_alive(struct proc *p)
{
    int status;

    if (p->exited)
        return 0;
    if (waitpid(p->pid, &status, WNOHANG) == p->pid) {
        p->exited = 1;
        p->status = code_of(status);
        proc_forget(p->pid);
        return 0;
    }
    return 1;
}

static void
slurp_into(const char *path, char *buf, size_t cap)
{
    char *s = proc_read_file(path);

    if (cap == 0)
        return;
    snprintf(buf, cap, "%s", s ? s : "");
    free(s);
}

int
proc_run(char *const argv[], char *const env_extra[], const char *stdin_text, char *out,
         size_t outcap, char *errout, size_t errcap, int timeout_ms)
{
    char dir[64], in_path[96] = "/dev/null";
    struct proc p;
    int rc;

    if (test_mkdtemp(dir, sizeof(dir)) != 0)
        return -1;
    if (stdin_text) { /* through a file, so a large input cannot block on a pipe */
        FILE *f;
        snprintf(in_path, sizeof(in_path), "%s/stdin", dir);
        f = fopen(in_path, "w");
        if (f) {
            fputs(stdin_text, f);
            fclose(f);
        }
    }
    if (spawn_in(&p, dir, "run", argv, env_extra, in_path) != 0) {
        test_rmtree(dir);
        return -1;
    }
    rc = proc_wait(&p, timeout_ms);
    if (rc < 0)
        proc_kill9(&p);
    slurp_into(p.out_path, out, outcap);
    slurp_into(p.err_path, errout, errcap);
    test_rmtree(dir);
    return rc < 0 ? -1 : rc;
}

char *
proc_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0, n;

    if (!f)
        return NULL;
    do {
        if (len + 4096 + 1 > cap) {
            char *nb = realloc(buf, cap = (cap ? cap * 2 : 8192));
            if (!nb)
                break;
            buf = nb;
        }
        n = fread(buf + len, 1, cap - len - 1, f);
        len += n;
    } while (n > 0);
    fclose(f);
    if (buf)
        buf[len] = '\0';
    return buf;
}

int
proc_count_lines(const char *path, const char *needle)
{
    char *s = proc_read_file(path), *line, *save = NULL;
    int n = 0;

    if (!s)
        return 0;
    for (line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        if (strstr(line, needle))
            n++;
    free(s);
    return n;
}
