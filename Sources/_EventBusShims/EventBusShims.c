#include "EventBusShims.h"

_Thread_local void *eventbus_release_loop_slot_value = 0;

uint64_t eventbus_next_subscription_id(void) {
    static uint64_t counter = 0;
    return __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
}

#if defined(__APPLE__)
#include <pthread.h>

bool eventbus_is_main_thread(void) { return pthread_main_np() != 0; }
#elif defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>

bool eventbus_is_main_thread(void) {
    // The main thread is the one whose kernel thread id is the process id. Both are system calls,
    // so the answer is cached per thread (a thread never becomes, or stops being, the main thread;
    // a thread that forks keeps its answer in the child, where it is only ever asked by it).
    static __thread int cached = -1;
    if (cached < 0) cached = (pid_t)syscall(SYS_gettid) == getpid();
    return cached == 1;
}

#include <linux/futex.h>

/// How many times a waiter pauses while checking the lock before it sleeps (as Rust's standard
/// library).
#define EVENTBUS_LOCK_SPINS 100

/// Spins while the lock is held with no sleeper recorded (1), at most `EVENTBUS_LOCK_SPINS` times;
/// returns the state it last saw. A bus's critical sections are short and bounded, so the holder
/// usually lets go within a few hundred nanoseconds: a waiter that slept instead would wake tens of
/// microseconds later, by when the holder (the lock is unfair) has often taken it again, and sleep
/// again. Measured at a million subscriptions (Benchmarks/README.md, "Worst single operation"): a
/// second thread's dispatch while another churns, p99 40 µs without spinning, 3 µs with.
static int32_t eventbus_lock_spin(int32_t *word) {
    for (int spins = EVENTBUS_LOCK_SPINS;; spins--) {
        int32_t state = __atomic_load_n(word, __ATOMIC_RELAXED);
        if (state != 1 || spins == 0) return state;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        __asm__ __volatile__("isb sy");  // as Rust's `spin_loop`: `yield` is a near no-op on most cores
#endif
    }
}

void eventbus_lock_wait(int32_t *word) {
    // Rust's standard library's futex mutex: spin while the holder may be about to let go; take
    // the lock if it is free (as 1, like the uncontended path: a sleeper there may be, but the one
    // woken sets 2 again when it finds the lock taken); otherwise mark it contended (2) while
    // taking it, so that the unlock that lets this thread in also wakes the next waiter, and sleep
    // while it is still 2. A thread that has slept always takes it as 2.
    int32_t state = eventbus_lock_spin(word);
    if (state == 0) {
        int32_t expected = 0;
        if (__atomic_compare_exchange_n(word, &expected, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) return;
        state = expected;
    }
    for (;;) {
        if (state != 2 && __atomic_exchange_n(word, 2, __ATOMIC_ACQUIRE) == 0) return;
        syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
        state = eventbus_lock_spin(word);
    }
}

void eventbus_lock_wake(int32_t *word) { syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0); }
#else
bool eventbus_is_main_thread(void) { return false; }
#endif

#include <stdio.h>

void eventbus_print_error(const char *message) {
    fputs(message, stderr);
    fputc('\n', stderr);
}
