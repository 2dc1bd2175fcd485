/* The process's settings (the SENDAT_* environment) and the reload of keys and webhook
 * secrets on SIGHUP. */
#ifndef CONFIG_H
#define CONFIG_H

#include "consumer.h"

/* Main thread: loads the key ring and webhook secrets again and swaps them in; on a bad
 * file the old ones stay and the reason is logged. */
void consumer_reload(struct consumer *c);

/* Reads the webhook secrets: SENDAT_WEBHOOK_SECRET_FILE (reloadable) or SENDAT_WEBHOOK_SECRET. */
enum sa_code consumer_load_signer(struct signer **out, struct sa_err *err) SA_MUST_CHECK;

/* Reads the SENDAT_* environment; on a bad value prints the reason and returns -1. */
int config_load(struct config *cfg);
void config_usage(void);

#endif
