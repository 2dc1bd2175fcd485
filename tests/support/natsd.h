/* Real nats-servers for tests: one JetStream node, or a 3-node cluster on loopback, each in
 * a private folder with a port the server picked (or freshly probed), never a fixed one.
 * Every server is killed when the test process ends, even after a failed assertion. */
#ifndef NATSD_H
#define NATSD_H

#include <sys/types.h>

#include <nats/nats.h>

struct natsd {
    pid_t pid;        /* 0 while not running */
    int port;         /* client port, kept across natsd_restart */
    int cluster_port; /* 0 for a single node */
    char dir[256];    /* private folder: js/ (store), server.log, server.conf, *.ports */
    char url[64];     /* nats://127.0.0.1:PORT */
    char name[16];    /* server name: n0, or n1..n3 in a cluster */
    char routes[256];
};

struct natsd_cluster {
    struct natsd node[3];
    char urls[256]; /* comma-separated client URLs */
};

/* Starts a single JetStream node (-js -sd DIR/js) on a free port of 127.0.0.1 and waits until
 * its ports file is complete. 0, or -1 after printing the tail of its log (nothing is left
 * running and the folder is removed). */
int natsd_start(struct natsd *srv);
/* Like natsd_start, but runs `-c DIR/server.conf` with config_text, in which every "$DIR"
 * becomes the private folder (JetStream only if the text enables it, e.g.
 * "jetstream { store_dir: \"$DIR/js\" }"). -a 127.0.0.1 -p -1 still apply. */
int natsd_start_config(struct natsd *srv, const char *config_text);
/* SIGTERM, up to 5 s, then SIGKILL to the process group; removes the folder. Safe to call on
 * a killed server and twice. */
void natsd_stop(struct natsd *srv);
/* SIGKILL to the process group, keeping the store; natsd_restart brings it back. */
void natsd_kill(struct natsd *srv);
/* SIGTERM (a clean shutdown that flushes the store), keeping the store. */
void natsd_term(struct natsd *srv);
/* Starts the server again on the same port, folder, store, config and cluster settings
 * (killing it first if it still runs) and waits for its ports file. 0 or -1. */
int natsd_restart(struct natsd *srv);

/* Starts three JetStream nodes n1..n3 routed to each other (cluster name "sendat"), each with
 * its own folder, and waits (30 s * multiplier) until a replicas-3 stream can be created.
 * 0, or -1 with every node stopped. */
int natsd_cluster_start(struct natsd_cluster *c);
void natsd_cluster_stop(struct natsd_cluster *c);
/* Index of the node of c that leads stream (asked through urls, comma-separated), or -1. */
int natsd_cluster_leader(const struct natsd_cluster *c, const char *urls, const char *stream);

/* Like natsd_cluster_start, but node n<i+1> runs `-c` config_text[i] (-a 127.0.0.1 -p -1 still
 * apply), which sets up JetStream and the cluster itself: "$DIR" becomes the node's folder and
 * "$ROUTE_PORT1".."$ROUTE_PORT3" the three nodes' cluster ports (free loopback ports). user
 * and password (NULL: none) are who creates the replicas-3 stream that shows it is ready.
 * natsd_restart keeps a node's config. 0, or -1 with every node stopped. */
int natsd_cluster_start_config(struct natsd_cluster *c, const char *const config_text[3],
                               const char *user, const char *password);

/* text with every token replaced by value, malloc'd (NULL without memory). */
char *natsd_replace(const char *text, const char *token, const char *value);

/* Connects to urls (comma-separated) as user (NULL: anonymous) with password. */
natsStatus natsd_connect(natsConnection **nc, const char *urls, const char *user,
                         const char *password);

#endif
