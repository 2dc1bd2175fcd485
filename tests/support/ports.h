/* Loopback ports for test servers that must get the same port again after a restart. */
#ifndef SENDAT_TEST_PORTS_H
#define SENDAT_TEST_PORTS_H

/* A port of 127.0.0.1 free now and kept for this process: below the kernel's ephemeral range,
 * so no outgoing connection or port-0 bind takes it while its server is down, and locked in a
 * folder all test processes share, so no other test reserves it until this process has exited.
 * The port, or -1. */
int port_reserve(void);

#endif
