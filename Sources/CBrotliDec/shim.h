// The system brotli decoder, found through pkg-config (Debian: libbrotli-dev), which the
// system libcurl links too: CCurlDecode.c decodes `br` bodies with it.
#include <brotli/decode.h>
