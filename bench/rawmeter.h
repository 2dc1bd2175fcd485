/* CPU per message of sendat-rawjs's phases: this process's, and the nats-servers' when their
 * pids are given (every node of a cluster: their work together is what one task costs the
 * broker, as bench/run.sh sums them for sendat's scenarios). */
#ifndef RAWMETER_H
#define RAWMETER_H

/* "PID[,PID...]" (at most 8): the server processes each report adds up. */
void rawmeter_server_pids(const char *list);
/* Starts counting CPU for the next phase. */
void rawmeter_mark(void);
/* Prints one phase: "name":{msgs, seconds, rate, CPU per message} on stdout (a comma first
 * unless *first, which it clears) and a line on stderr, with CPU counted since the last mark;
 * then marks again. */
void rawmeter_report(const char *name, long msgs, double secs, int *first);

#endif
