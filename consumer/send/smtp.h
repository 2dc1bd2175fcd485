/* The SMTP server's settings, read by the process at start (config.c) for smtp.c's sends. */
#ifndef SMTP_H
#define SMTP_H

#include "consumer.h"

/* Reads SENDAT_SMTP_*; refuses TLS off for a server that is not on loopback. */
int smtp_config_load(struct smtp_config *s);

#endif
