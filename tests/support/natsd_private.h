/* What natsd_cluster.c uses of natsd.c's single node, and no test sees: writing a node's
 * config and launching the node in its folder. */
#ifndef NATSD_PRIVATE_H
#define NATSD_PRIVATE_H

#include "natsd.h"

/* Writes config_text to s->dir/server.conf, every "$DIR" replaced by s->dir. 0 or -1. */
int natsd_write_config(struct natsd *s, const char *config_text);
/* Starts s (from server.conf when config, else -js -sd DIR/js; cluster flags when s has a
 * cluster_port) and waits for its ports file, which sets s->port and s->url. 0, or -1 with
 * nothing left running (its log tail printed). */
int natsd_launch(struct natsd *s, int config);
/* The last 2,000 bytes of s's server.log on stderr. */
void natsd_print_log_tail(struct natsd *s);

#endif
