/* The bounds of sendat's lateness histograms, shared by the consumer (/metrics, its beats) and
 * the producer (`sendat stats`, the console's recent delivery). */
#ifndef SA_LATENESS_H
#define SA_LATENESS_H

#define LATENESS_BUCKETS 16

/* Upper bounds in ms, ascending; a last bucket past them counts everything later. */
extern const long lateness_bounds_ms[LATENESS_BUCKETS];

#endif
