/* Raw HTTP/1.1 over sockets for the hostile-client tests of `sendat serve` (test_api_hostile.c):
 * what curl would not do (a head without its body, bytes trickled, connections held). */
#ifndef RAWHTTP_H
#define RAWHTTP_H

#include "fixture.h"

/* The port in api_client.h's base ("http://127.0.0.1:PORT/v1"). */
int rawhttp_api_port(void);
/* Sends text on s and waits up to ms for an answer: its HTTP status, 0 for none, -1 if the
 * server closed the connection without one. */
int rawhttp_exchange(int s, const char *text, int ms);
/* Sends request from the address from to 127.0.0.1:port on a new connection: the answer's
 * status as rawhttp_exchange gives it, 0 if the connection failed. */
int rawhttp_status_from(const char *from, int port, const char *request, int ms);
/* The status a head alone gets from 127.0.0.1 (the body of length bytes never sent; token
 * NULL: no Authorization): the answer must come before the body. */
int rawhttp_head_only(const char *method, const char *path, const char *token, long length);
/* Sends a head as token with a 16,000-byte body declared and the body's first byte; 0 if it
 * failed. */
int rawhttp_start_slow_body(int s, const char *token);
/* Sends drip into each open connection of conns every 300 ms (answers read and dropped) until
 * the server has closed them all (1) or ms (times the test multiplier) passed (0). */
int rawhttp_drip_until_closed(int *conns, int n, const char *drip, int ms);
/* A size of p's /proc status in KiB (field "VmHWM:", the peak, or "VmRSS:", now), or -1. */
long rawhttp_status_kib(const struct proc *p, const char *field);

#endif
