// What the off-thread benchmarks (Scenarios/OffThread*.swift) read from the allocator: the heap in
// use, and the allocation count of ordo-one/malloc-interposer when a process runs with it
// preloaded. In C because glibc's <malloc.h> (mallinfo2) is not part of Swift's Glibc module.

#ifndef EVENTBUS_HEAP_PROBE_H
#define EVENTBUS_HEAP_PROBE_H

#include <stdbool.h>
#include <stdint.h>

/// Bytes the allocator has handed out and not taken back: glibc's `mallinfo2()` `uordblks +
/// hblkhd` (small chunks plus mmapped ones, every arena), macOS's default zone `size_in_use`.
/// Freed memory glibc keeps for reuse is not counted (RSS would count it).
int64_t heap_probe_in_use(void);

/// Whether ordo-one/malloc-interposer is loaded (LD_PRELOAD / DYLD_INSERT_LIBRARIES), so that
/// `heap_probe_count_mallocs` and `heap_probe_mallocs` mean something.
bool heap_probe_interposed(void);

/// Resets the interposer's counters and turns counting on (`true`) or off (`false`).
void heap_probe_count_mallocs(bool on);

/// The allocations counted since counting was last turned on, every thread; -1 without the
/// interposer.
int64_t heap_probe_mallocs(void);

#endif
