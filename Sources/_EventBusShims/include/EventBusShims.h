// Compiler atomics for EventBus's per-subscription liveness word and subscription ids.
//
// Swift's `Synchronization.Atomic` needs iOS 18 / macOS 15; EventBus supports iOS 13 / macOS 10.15,
// so the two operations it needs are written here over the GCC/Clang `__atomic` builtins, which
// ThreadSanitizer understands. The atomics are `static inline`, so the dispatch path pays no call.
#ifndef EVENTBUS_SHIMS_H
#define EVENTBUS_SHIMS_H

#include <stdbool.h>
#include <stdint.h>

/// Loads `*word` with acquire ordering.
static inline intptr_t eventbus_atomic_load(const intptr_t *word) {
    return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

/// Stores `value` in `*word` with release ordering.
static inline void eventbus_atomic_store(intptr_t *word, intptr_t value) {
    __atomic_store_n(word, value, __ATOMIC_RELEASE);
}

/// Replaces `*word` with `desired` if it equals `expected`; returns whether it did (acq_rel).
static inline bool eventbus_atomic_compare_exchange(intptr_t *word, intptr_t expected, intptr_t desired) {
    return __atomic_compare_exchange_n(word, &expected, desired, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/// A number unique in the process, from a counter starting at 1 (relaxed atomic increment).
static inline intptr_t eventbus_atomic_add(intptr_t *word, intptr_t delta) {
    return __atomic_add_fetch(word, delta, __ATOMIC_ACQ_REL);
}

uint64_t eventbus_next_subscription_id(void);

/// Whether the calling thread is the process's main thread (Darwin: `pthread_main_np`; Linux: its
/// thread id is the process id, cached per thread since both are system calls).
bool eventbus_is_main_thread(void);

/// Writes `message` and a newline to standard error (debug reports, without Foundation).
void eventbus_print_error(const char *message);

#endif
