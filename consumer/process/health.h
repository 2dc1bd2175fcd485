/* /healthz, /readyz and Prometheus /metrics on SENDAT_HTTP_ADDR (libmicrohttpd). */
#ifndef HEALTH_H
#define HEALTH_H

#include "consumer.h"

struct health;

/* addr: "host:port", ":port" or "off" (NULL: ":8080"). A malformed addr, or one that cannot
 * be listened on (a port taken by another consumer on the host), is SA_EINVAL with a message
 * that names SENDAT_HTTP_ADDR: the consumer stops rather than run without its probes. */
enum sa_code health_start(struct health **out, struct consumer *c, const char *addr,
                          struct sa_err *err) SA_MUST_CHECK;
void health_stop(struct health *h);

#endif
