/* Outcome writes the broker did not take at once (no PubAck: a restart, a leader election, a
 * claims bucket away for seconds), written again off the sending thread, so the curl loop
 * keeps collecting the answers of the sends in flight meanwhile (issue 37.3): a 200 received
 * is "sent" whenever it is recorded. A job comes back to the main loop once its outcome is
 * written (or written over by another: the claim's rules decide), and only then does the task
 * go on (acked, retried or dead-lettered); until then its message stays held, and the claim
 * says "sending" by a member that answers, so no other member sends it. */
#ifndef PATIENT_H
#define PATIENT_H

#include "claimq.h"
#include "consumer.h"

struct patient;

/* Starts the writer thread; wake(arg) is called when a job finishes on an empty done list. */
enum sa_code patient_new(struct patient **out, struct consumer *c, void (*wake)(void *), void *arg,
                         struct sa_err *err) SA_MUST_CHECK;
/* Stops the thread after the write under way; jobs never written come back as they were
 * (ok = 0) from patient_done. NULL is fine. */
void patient_stop(struct patient *p);
void patient_free(struct patient *p);

/* Main thread: the job (a CLAIM_RECORD not written) is the writer's until patient_done. */
void patient_put(struct patient *p, struct claim_job *job);
/* Main thread: the jobs written since the last call, oldest first (a list through next), with
 * ok = 1; after patient_stop, also those never written (ok = 0). */
struct claim_job *patient_done(struct patient *p);
/* Jobs put and not yet taken back. */
int patient_pending(struct patient *p);

#endif
