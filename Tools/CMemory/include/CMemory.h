#ifndef CMEMORY_H
#define CMEMORY_H

/// Returns the free memory of the heap to the system, where the C library
/// keeps it otherwise (glibc's malloc_trim); does nothing elsewhere.
/// sqlite-watch calls it after the first fetch of a large result, whose
/// temporary values glibc would keep for the life of the process.
void cmemory_release_free_memory(void);

// Linking this module also makes every thread of the process allocate from
// one heap (glibc's M_ARENA_MAX = 1, set before `main` runs, when no other
// thread exists yet): the rows sqlite-watch keeps are freed and made again
// on whichever thread serves the database, and with an arena per thread the
// memory one frees would not serve the others.

#endif
