/* Test clients that choose their loopback source address (any of 127/8), so per-address
 * limits of a server can be staged from one machine, and the descriptor room to hold many
 * such connections. */
#ifndef DIAL_H
#define DIAL_H

#define DIAL_NONBLOCK 1 /* dial_from: return while the handshake may still be going */

/* A TCP connection from src (an address of 127/8) to 127.0.0.1:port; flags 0 or
 * DIAL_NONBLOCK. The socket, or -1 if it could not be made: the reason is printed, except
 * for a blocking connect the server refused (an outcome some tests wait for). */
int dial_from(const char *src, int port, int flags);
/* The i-th non-blocking connection of a spread over the addresses NET.1, NET.2, ... holding
 * each connections apiece (the address is NET.(1 + i / each)); -1 as dial_from. */
int dial_spread(const char *net, int i, int each, int port);
/* Waits up to ms (times the multiplier) for s to be readable; 1 if it is. */
int dial_readable(int s, int ms);
/* Raises our soft descriptor limit to the hard one (children started later inherit it).
 * 1, or 0 if the hard limit is below need (the test cannot be staged here) or it failed. */
int dial_raise_fd_limit(long need);

#endif
