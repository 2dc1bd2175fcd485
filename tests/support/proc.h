/* Real child processes for tests: each in its own process group, output to files, and
 * killed at exit if a failing test left it running. */
#ifndef PROC_H
#define PROC_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

struct proc {
    pid_t pid;
    char out_path[300];
    char err_path[300];
    char name[64];
    int exited;
    int status; /* exit code, or 128 + signal */
};

/* Starts argv (argv[0] a path) with the environment plus env_extra ("K=V", NULL-terminated,
 * may be NULL); stdin /dev/null, stdout and stderr to DIR/NAME.out and DIR/NAME.err. */
int proc_spawn(struct proc *p, const char *dir, const char *name, char *const argv[], char *const env_extra[]);
int proc_signal(struct proc *p, int sig);
/* Exit code (or 128 + signal), or -1 if it did not end within timeout_ms * multiplier. */
int proc_wait(struct proc *p, int timeout_ms);
void proc_kill9(struct proc *p);
int proc_alive(struct proc *p);

/* Runs to completion; stdout and stderr captured (NUL-terminated, truncated to cap). Returns
 * the exit code, or -1 after killing it on timeout. stdin_text NULL means /dev/null. */
int proc_run(char *const argv[], char *const env_extra[], const char *stdin_text, char *out,
             size_t outcap, char *errout, size_t errcap, int timeout_ms);

char *proc_read_file(const char *path);
int proc_count_lines(const char *path, const char *needle);

/* Process groups killed at exit unless forgotten (used by natsd.c too). */
void proc_track(pid_t pgid);
void proc_forget(pid_t pgid);

#endif
