#ifndef CBUILDINFO_H
#define CBUILDINFO_H

/// The git commit courier was built from, or NULL when the build did not say. `make` links
/// in a small object that defines `courier_build_commit` (Makefile, COMMIT_OBJECT); a plain
/// `swift build` links none, so the symbol is weak and this returns NULL.
const char *cbuildinfo_commit(void);

#endif
