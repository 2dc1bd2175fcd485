/* sendat schedule's options (the booking request and the CLI's own) and its --batch run. */
#ifndef SCHEDULE_H
#define SCHEDULE_H

#include "batch.h"
#include "book_req.h"
#include "cli.h"

/* `sendat schedule`'s options: the request, the connection, and --batch's own. */
struct sched_cmd {
    struct cli cli;
    struct book_req req;
    const char *batch, *template_file;
    int strict;
};

/* cmd_batch.c: checks --batch's companions; runs the batch (prints the summary, returns the exit
 * code). */
int batch_check_opts(const struct sched_cmd *o);
int batch_run(const struct sched_cmd *o);

/* cmd_batch_report.c */
void batch_progress(struct batch *b, int last);
int batch_summary(struct batch *b, const char *fatal);

#endif
