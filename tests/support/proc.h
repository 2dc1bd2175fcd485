/* Real child processes for tests: each leads its own process group, writes its output to
 * files, and is killed when the test process exits (atexit), crashes or is killed (the child
 * gets SIGKILL when the thread that started it ends: start children from the main thread, or
 * use proc_run, which waits for its child on the thread that started it). */
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
    int status; /* exit code, or 128 + signal, once exited */
};

/* Starts argv (argv[0] an absolute path) with our environment plus env_extra ("K=V",
 * NULL-terminated, may be NULL; a K of ours is replaced), stdin /dev/null, stdout and stderr
 * to DIR/NAME.out and DIR/NAME.err. Returns 0, or -1 if the files or the fork failed; an
 * exec failure shows as exit code 127 with the reason in NAME.err. */
int proc_spawn(struct proc *p, const char *dir, const char *name, char *const argv[],
               char *const env_extra[]);
/* Sends sig to the process (not its group); 0, or -1 if it was never started. */
int proc_signal(struct proc *p, int sig);
/* Exit code (or 128 + signal), or -1 if it did not end within timeout_ms * multiplier. */
int proc_wait(struct proc *p, int timeout_ms);
/* SIGKILL to the whole process group, then reaps it; p->status becomes 128 + 9. */
void proc_kill9(struct proc *p);
/* 1 while running; reaps it (setting exited and status) once it ended. */
int proc_alive(struct proc *p);

/* Runs argv to completion; stdout and stderr captured (NUL-terminated, truncated to cap; a
 * NULL buffer or cap 0 discards). Returns the exit code (or 128 + signal), or -1 after
 * killing it on timeout (timeout_ms * multiplier). stdin_text NULL means /dev/null. */
int proc_run(char *const argv[], char *const env_extra[], const char *stdin_text, char *out,
             size_t outcap, char *errout, size_t errcap, int timeout_ms);

/* Whole file, malloc'd and NUL-terminated, or NULL. */
char *proc_read_file(const char *path);
/* Lines of the file containing needle (0 if the file is missing). */
int proc_count_lines(const char *path, const char *needle);

/* For natsd.c: forks a process-group leader running argv (argv[0] looked up in PATH if it
 * has no slash) with env_extra, stdin/stdout/stderr from in/out/err (-1: /dev/null for in,
 * ours for out and err), registered for cleanup at exit. Returns the pid, or -1. */
pid_t proc_start_group(char *const argv[], char *const env_extra[], int in, int out, int err);
/* Process groups killed at exit unless forgotten (once reaped). */
void proc_track(pid_t pgid);
void proc_forget(pid_t pgid);

#endif
