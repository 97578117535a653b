#include "EventBusShims.h"

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

void eventbus_lock_wait(int32_t *word) {
    // Marks the lock contended (2) while taking it, so that the unlock that lets this thread in
    // also wakes the next waiter; sleeps while the word is still 2.
    while (__atomic_exchange_n(word, 2, __ATOMIC_ACQUIRE) != 0) {
        syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
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
