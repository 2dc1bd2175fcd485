/* Spawning, waiting and cleaning up child processes. Every child leads its own process group
 * (setpgid in parent and child, as ct does) so a whole tree can be signalled at once, and no
 * child outlives the test: an atexit handler kills what is still tracked, and PDEATHSIG covers
 * a test process that dies without running atexit (a sanitizer abort, a ctest timeout). The
 * child only calls async-signal-safe functions: argv and the environment are built before fork. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "proc.h"

#define TRACK_MAX 256

extern char **environ;

/* proc_run may run on several threads at once (test_roles.c): the table has a lock */
static pthread_mutex_t track_lock = PTHREAD_MUTEX_INITIALIZER;
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
    pthread_mutex_lock(&track_lock);
    if (!atexit_set) {
        atexit(kill_tracked);
        atexit_set = 1;
    }
    for (int i = 0; i < TRACK_MAX; i++)
        if (tracked[i] == 0) {
            tracked[i] = pgid;
            pthread_mutex_unlock(&track_lock);
            return;
        }
    pthread_mutex_unlock(&track_lock);
    fprintf(stderr, "proc: more than %d children; pid %d is not killed at exit\n", TRACK_MAX,
            (int)pgid);
}

void
proc_forget(pid_t pgid)
{
    pthread_mutex_lock(&track_lock);
    for (int i = 0; i < TRACK_MAX; i++)
        if (tracked[i] == pgid)
            tracked[i] = 0;
    pthread_mutex_unlock(&track_lock);
}

static int
same_key(const char *a, const char *b)
{
    size_t n = strcspn(a, "=");

    return strncmp(a, b, n) == 0 && b[n] == '=';
}

/* environ without the keys env_extra sets, then env_extra; the strings are borrowed. */
static char **
build_env(char *const env_extra[])
{
    size_t n_env = 0, n_extra = 0, k = 0;
    char **env;

    while (environ && environ[n_env])
        n_env++;
    while (env_extra && env_extra[n_extra])
        n_extra++;
    env = calloc(n_env + n_extra + 1, sizeof(*env));
    if (!env)
        return NULL;
    for (size_t i = 0; i < n_env; i++) {
        int replaced = 0;
        for (size_t j = 0; j < n_extra && !replaced; j++)
            replaced = same_key(env_extra[j], environ[i]);
        if (!replaced)
            env[k++] = environ[i];
    }
    for (size_t j = 0; j < n_extra; j++)
        env[k++] = env_extra[j];
    env[k] = NULL;
    return env;
}

static void
say(int fd, const char *s)
{
    ssize_t rc = write(fd, s, strlen(s));

    (void)rc;
}

/* In the child: only async-signal-safe calls from here to exec. */
static void
child_exec(char *const argv[], char **env, pid_t parent, int in, int out, int err)
{
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) /* the test died before prctl */
        _exit(127);
    if (in < 0)
        in = open("/dev/null", O_RDONLY);
    if (in >= 0 && in != 0)
        dup2(in, 0);
    if (out >= 0 && out != 1)
        dup2(out, 1);
    if (err >= 0 && err != 2)
        dup2(err, 2);
    execvpe(argv[0], argv, env);
    say(2, "exec ");
    say(2, argv[0]);
    say(2, ": ");
    say(2, strerror(errno)); /* glibc's table lookup: no allocation */
    say(2, "\n");
    _exit(127); /* not exit(): the parent's atexit handler would kill its servers */
}

pid_t
proc_start_group(char *const argv[], char *const env_extra[], int in, int out, int err)
{
    char **env = build_env(env_extra);
    pid_t parent = getpid(), pid;

    if (!env)
        return -1;
    pid = fork();
    if (pid == 0)
        child_exec(argv, env, parent, in, out, err);
    free(env);
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
    in = open(in_path, O_RDONLY | O_CLOEXEC);
    out = open(p->out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    err = open(p->err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (in >= 0 && out >= 0 && err >= 0)
        p->pid = proc_start_group(argv, env_extra, in, out, err);
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
    if (err >= 0)
        close(err);
    if (p->pid < 0)
        p->pid = 0;
    return p->pid > 0 ? 0 : -1;
}

int
proc_spawn(struct proc *p, const char *dir, const char *name, char *const argv[],
           char *const env_extra[])
{
    return spawn_in(p, dir, name, argv, env_extra, "/dev/null");
}

int
proc_signal(struct proc *p, int sig)
{
    if (p->pid <= 0)
        return -1; /* kill(0, sig) would hit the test itself */
    return p->exited ? 0 : kill(p->pid, sig);
}

static void
reaped(struct proc *p, int status)
{
    p->exited = 1;
    p->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    proc_forget(p->pid);
}

int
proc_wait(struct proc *p, int timeout_ms)
{
    int64_t deadline = test_now_ms() + (int64_t)(timeout_ms * test_timeout_multiplier());
    struct timespec tick = {0, 10 * 1000000L};
    int status;

    if (p->pid <= 0)
        return -1;
    while (!p->exited) {
        pid_t r = waitpid(p->pid, &status, WNOHANG);
        if (r == p->pid) {
            reaped(p, status);
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
    if (waitpid(p->pid, &status, 0) == p->pid)
        reaped(p, status);
    proc_forget(p->pid);
}

int
proc_alive(struct proc *p)
{
    int status;

    if (p->exited || p->pid <= 0)
        return 0;
    if (waitpid(p->pid, &status, WNOHANG) == p->pid) {
        reaped(p, status);
        return 0;
    }
    return 1;
}

static void
slurp_into(const char *path, char *buf, size_t cap)
{
    char *s;

    if (!buf || cap == 0)
        return;
    s = proc_read_file(path);
    snprintf(buf, cap, "%s", s ? s : "");
    free(s);
}

static int
write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    int rc;

    if (!f)
        return -1;
    rc = fputs(text, f) < 0 ? -1 : 0;
    return fclose(f) != 0 ? -1 : rc;
}

int
proc_run(char *const argv[], char *const env_extra[], const char *stdin_text, char *out,
         size_t outcap, char *errout, size_t errcap, int timeout_ms)
{
    char dir[64], in_path[96] = "/dev/null";
    struct proc p;
    int rc = -1;

    if (out && outcap)
        out[0] = '\0';
    if (errout && errcap)
        errout[0] = '\0';
    if (test_mkdtemp(dir, sizeof(dir)) != 0)
        return -1;
    if (stdin_text) { /* through a file, so a large input cannot block on a pipe */
        snprintf(in_path, sizeof(in_path), "%s/stdin", dir);
        if (write_file(in_path, stdin_text) != 0)
            goto out;
    }
    if (spawn_in(&p, dir, "run", argv, env_extra, in_path) != 0)
        goto out;
    rc = proc_wait(&p, timeout_ms);
    if (rc < 0)
        proc_kill9(&p);
    slurp_into(p.out_path, out, outcap);
    slurp_into(p.err_path, errout, errcap);
out:
    test_rmtree(dir);
    return rc;
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
            if (!nb) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
        n = fread(buf + len, 1, cap - len - 1, f);
        len += n;
    } while (n > 0);
    fclose(f);
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
