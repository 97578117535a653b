#include "EventBusShims.h"

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>

long eventbus_current_thread_id(void) { return (long)syscall(SYS_gettid); }
#else
long eventbus_current_thread_id(void) { return -1; }
#endif
