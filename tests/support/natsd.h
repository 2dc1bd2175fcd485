/* Real nats-servers for tests: one JetStream node, or a 3-node cluster on loopback, each in
 * a private folder with a port the server picked (or freshly probed), never a fixed one. */
#ifndef NATSD_H
#define NATSD_H

#include <sys/types.h>

struct natsd {
    pid_t pid;
    int port;
    int cluster_port; /* 0 for a single node */
    char dir[256];
    char url[64];
    char name[16];
    char routes[256];
};

struct natsd_cluster {
    struct natsd node[3];
    char urls[256]; /* comma-separated client URLs */
};

int natsd_start(struct natsd *srv);
/* Starts with a config file (text may hold $DIR for the private folder). */
int natsd_start_config(struct natsd *srv, const char *config_text);
void natsd_stop(struct natsd *srv);
/* SIGKILL, keeping the store; natsd_restart brings it back on the same port and store. */
void natsd_kill(struct natsd *srv);
int natsd_restart(struct natsd *srv);

int natsd_cluster_start(struct natsd_cluster *c);
void natsd_cluster_stop(struct natsd_cluster *c);

#endif
