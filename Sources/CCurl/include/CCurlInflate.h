#ifndef CCURL_INFLATE_H
#define CCURL_INFLATE_H

// A zlib inflater for gzip and deflate response bodies. The curl transport decodes bodies
// itself, not through libcurl, because libcurl never says whether the compressed stream
// reached its end: a body cut inside the stream, in whole HTTP framing, passed as complete.

#include <stddef.h>

typedef struct ccurl_inflater ccurl_inflater;

/// Receives each piece of decoded output; returns 0 to stop the decoding.
typedef int (*ccurl_inflate_sink)(void *context, const unsigned char *bytes, size_t count);

/// A gzip decoder (a zlib header is accepted too), or with `deflate` non-zero a deflate one (the
/// zlib format, or raw deflate as some servers send). NULL when zlib cannot start.
ccurl_inflater *ccurl_inflater_create(int deflate);
void ccurl_inflater_free(ccurl_inflater *inflater);

/// Decodes `count` bytes, handing the output to `sink`. Returns 0 when more input is wanted,
/// 1 once the stream has ended (later bytes are ignored, as libcurl does), -1 for data that is
/// not a valid stream (`ccurl_inflater_error` says why), -2 when the sink stopped.
int ccurl_inflater_write(ccurl_inflater *inflater, const unsigned char *input, size_t count,
                         ccurl_inflate_sink sink, void *context);

/// Whether the stream reached its end (with its trailer checked, for gzip and zlib).
int ccurl_inflater_ended(const ccurl_inflater *inflater);

/// zlib's reason for the last -1.
const char *ccurl_inflater_error(const ccurl_inflater *inflater);

#endif
