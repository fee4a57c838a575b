#include "CMemory.h"

// Any header of the C library defines __GLIBC__ for glibc: test it after one.
#include <stdlib.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

void cmemory_release_free_memory(void) {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}

#if defined(__GLIBC__)
// Before main, while the process has one thread (see CMemory.h).
__attribute__((constructor)) static void cmemory_use_one_heap(void) {
    mallopt(M_ARENA_MAX, 1);
}
#endif
