#include "CBuildInfo.h"
#include <stddef.h>

/* Defined only in the object `make` writes under .build/git/ (a new file name for each
   commit, so that a new commit relinks and recompiles nothing): weak, so that a build without
   it links, with a null address. */
extern const char *courier_build_commit(void) __attribute__((weak));

const char *cbuildinfo_commit(void) {
    return courier_build_commit ? courier_build_commit() : NULL;
}
