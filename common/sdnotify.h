/* The service manager's readiness protocol (systemd's sd_notify, Type=notify units) without
 * libsystemd: one datagram such as "READY=1" to the socket named by NOTIFY_SOCKET. Without
 * that variable (not started by systemd) nothing is sent. */
#ifndef SA_SDNOTIFY_H
#define SA_SDNOTIFY_H

#include "sa_err.h"

/* Sends state ("READY=1", "STOPPING=1", "STATUS=...") to $NOTIFY_SOCKET: a path, or an
 * abstract name written with a leading '@'. SA_OK also when the variable is unset or empty;
 * SA_EINVAL for a name too long, SA_ERETRY when the socket cannot be reached. */
enum sa_code sa_sdnotify(const char *state, struct sa_err *err) SA_MUST_CHECK;

#endif
