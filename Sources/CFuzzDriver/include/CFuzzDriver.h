#ifndef COURIER_FUZZ_DRIVER_H
#define COURIER_FUZZ_DRIVER_H

#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver (LLVM 11 and later), present only when linked with -sanitize=fuzzer:
/// courier-fuzz calls it from its own main, so that one binary serves every target.
int LLVMFuzzerRunDriver(int *argc, char ***argv,
                        int (*callback)(const uint8_t *data, size_t size));

#endif
