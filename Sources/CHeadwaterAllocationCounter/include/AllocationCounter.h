#ifndef HEADWATER_ALLOCATION_COUNTER_H
#define HEADWATER_ALLOCATION_COUNTER_H
#include <stdint.h>

/// Number of heap allocations (malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign)
/// made by this process since start. Only linked into the benchmark executable, which interposes the
/// allocator entry points to count them (glibc's __libc_* functions do the real work).
uint64_t headwater_allocation_count(void);

#endif
