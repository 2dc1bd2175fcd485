/* See lateness.h. */
#include "lateness.h"

const long lateness_bounds_ms[LATENESS_BUCKETS] = {
    1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000, 1800000};
