// The system Zstandard library, found through pkg-config (Debian: libzstd-dev), which the
// system libcurl links too: CCurlDecode.c decodes `zstd` bodies with it.
#include <zstd.h>
