#include "HeapProbe.h"

#include <dlfcn.h>
#include <stddef.h>

#if defined(__APPLE__)
#include <malloc/malloc.h>
#else
#include <malloc.h>
#endif

int64_t heap_probe_in_use(void) {
#if defined(__APPLE__)
    malloc_statistics_t statistics;
    malloc_zone_statistics(NULL, &statistics);
    return (int64_t)statistics.size_in_use;
#else
    struct mallinfo2 info = mallinfo2();
    return (int64_t)(info.uordblks + info.hblkhd);
#endif
}

// The interposer's C entry points, looked up at run time: this process does not link the
// interposer (its 16-byte header per allocation would inflate the heap figures), a child run
// with it preloaded counts.
typedef void (*interposer_toggle)(void);
typedef void (*interposer_stats)(int64_t *, int64_t *, int64_t *, int64_t *, int64_t *, int64_t *);

static void *interposer_symbol(const char *name) { return dlsym(RTLD_DEFAULT, name); }

bool heap_probe_interposed(void) { return interposer_symbol("malloc_interposer_get_stats") != NULL; }

void heap_probe_count_mallocs(bool on) {
    interposer_toggle toggle = (interposer_toggle)interposer_symbol(on ? "malloc_interposer_enable"
                                                                       : "malloc_interposer_disable");
    interposer_toggle reset = (interposer_toggle)interposer_symbol("malloc_interposer_reset");
    if (toggle == NULL || reset == NULL) return;
    if (on) {
        reset();
        toggle();
    } else {
        toggle();
    }
}

int64_t heap_probe_mallocs(void) {
    interposer_stats stats = (interposer_stats)interposer_symbol("malloc_interposer_get_stats");
    if (stats == NULL) return -1;
    int64_t mallocs = 0, bytes = 0, small = 0, large = 0, frees = 0, freed = 0;
    stats(&mallocs, &bytes, &small, &large, &frees, &freed);
    return mallocs;
}
