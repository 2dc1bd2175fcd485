/* A binary min-heap of fixed-size elements ordered by an int64 key the owner reads from each
 * (a due time). The wheel keeps its held tasks in one and the sender its claimed tasks in
 * another. Not thread-safe: its owner's thread only. */
#ifndef MINHEAP_H
#define MINHEAP_H

#include <stddef.h>
#include <stdint.h>

struct minheap {
    char *v;     /* len elements of size bytes each */
    size_t size; /* of one element */
    size_t len, cap;
    int64_t (*key)(const void *elem);
};

void minheap_init(struct minheap *h, size_t size, int64_t (*key)(const void *elem));
void minheap_free(struct minheap *h);

/* Copies *elem in; -1 if it cannot grow (nothing changes), else 0. */
int minheap_push(struct minheap *h, const void *elem);

/* The element with the least key, or NULL when empty. */
void *minheap_top(const struct minheap *h);

/* Copies the element with the least key to *out and removes it; 0 when empty. */
int minheap_pop(struct minheap *h, void *out);

/* Element i in no particular order (i < len), to visit them all. */
void *minheap_at(const struct minheap *h, size_t i);

/* Copies the last element in that order to *out and removes it (the order of the rest holds):
 * to empty the heap without sorting; 0 when empty. */
int minheap_take_last(struct minheap *h, void *out);

#endif
