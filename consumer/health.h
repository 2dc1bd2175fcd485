/* /healthz, /readyz and Prometheus /metrics on SENDAT_HTTP_ADDR (libmicrohttpd). */
#ifndef HEALTH_H
#define HEALTH_H

#include "consumer.h"

struct health;

/* addr: "host:port", ":port" or "off" (NULL: ":8080"). A port that is taken is logged and
 * the consumer goes on without the endpoint; a malformed addr is SA_EINVAL. */
enum sa_code health_start(struct health **out, struct consumer *c, const char *addr, struct sa_err *err) SA_MUST_CHECK;
void health_stop(struct health *h);

#endif
