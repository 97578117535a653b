// Compiler atomics for EventBus's per-subscription liveness word and subscription ids.
//
// Swift's `Synchronization.Atomic` needs iOS 18 / macOS 15; EventBus supports iOS 13 / macOS 10.15,
// so the two operations it needs are written here over the GCC/Clang `__atomic` builtins, which
// ThreadSanitizer understands. The atomics are `static inline`, so the dispatch path pays no call.
#ifndef EVENTBUS_SHIMS_H
#define EVENTBUS_SHIMS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

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

/// This thread's slot for the releases that nested bus operations hand to the outermost one
/// (`ReleaseLoop` in the Swift sources): `NULL` while the thread is not releasing for a bus.
extern _Thread_local void *eventbus_release_loop_slot_value;
static inline void **eventbus_release_loop_slot(void) {
    return &eventbus_release_loop_slot_value;
}

#if defined(__linux__)
// The bus's mutex on Linux: a futex word, 0 unlocked, 1 locked, 2 locked with threads possibly
// waiting (the
// algorithm of glibc's default mutex, Drepper's "Futexes Are Tricky", mutex 3, with the short spin
// before sleeping of Rust's standard library). The uncontended lock and unlock are one atomic
// instruction each, inline; a waiter spins briefly, then sleeps in the kernel, woken by the
// unlock. Not recursive: a thread that locks it twice waits forever (debug builds of the
// Swift side check for that first).

/// Takes the lock if it is free; returns whether it did (acquire).
static inline bool eventbus_lock_try(int32_t *word) {
    int32_t expected = 0;
    return __atomic_compare_exchange_n(word, &expected, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

/// Waits for the lock and takes it (the contended case of `eventbus_lock`).
void eventbus_lock_wait(int32_t *word);

/// Wakes one thread waiting for the lock (the contended case of `eventbus_unlock`).
void eventbus_lock_wake(int32_t *word);

/// Takes the lock, waiting for it if it is held.
static inline void eventbus_lock(int32_t *word) {
    if (!eventbus_lock_try(word)) eventbus_lock_wait(word);
}

/// Releases the lock (release), waking a waiter if there may be one.
static inline void eventbus_unlock(int32_t *word) {
    if (__atomic_exchange_n(word, 0, __ATOMIC_RELEASE) == 2) eventbus_lock_wake(word);
}
#endif

/// Whether the calling thread is the process's main thread (Darwin: `pthread_main_np`; Linux: its
/// thread id is the process id, cached per thread since both are system calls).
bool eventbus_is_main_thread(void);

/// Writes `message` and a newline to standard error (debug reports, without Foundation).
void eventbus_print_error(const char *message);

#if !defined(_WIN32)
#include <sys/mman.h>
#endif

/// From this size on, `eventbus_allocate_zeroed` maps memory from the system itself.
#define EVENTBUS_MAPPED_MINIMUM ((size_t)128 * 1024)

/// `size` zeroed bytes, or `NULL` (a hash table: its empty marks cost no pass over it). A large
/// block is mapped from the system (zero pages, touched only as they are used), and unmapped when
/// freed: the allocator neither keeps it nor lets it pin other memory once the table shrinks.
static inline void *eventbus_allocate_zeroed(size_t size) {
#if !defined(_WIN32)
    if (size >= EVENTBUS_MAPPED_MINIMUM) {
        void *block = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        return block == MAP_FAILED ? NULL : block;
    }
#endif
    return calloc(1, size);
}

/// Frees `block`, of `size` bytes, which `eventbus_allocate_zeroed(size)` returned.
static inline void eventbus_free_zeroed(void *block, size_t size) {
#if !defined(_WIN32)
    if (size >= EVENTBUS_MAPPED_MINIMUM) {
        munmap(block, size);
        return;
    }
#endif
    free(block);
}

#endif
