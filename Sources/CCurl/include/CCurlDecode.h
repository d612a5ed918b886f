#ifndef CCURL_DECODE_H
#define CCURL_DECODE_H

// Decoders for compressed response bodies: gzip and deflate with zlib, br with libbrotlidec,
// zstd with libzstd, the libraries the system libcurl links too. The curl transport decodes
// bodies itself, not through libcurl (CURLOPT_ACCEPT_ENCODING), because libcurl never says
// whether the compressed stream reached its end: a body cut inside the stream, in whole HTTP
// framing, passed as complete, for every coding (curl 7.88). Each decoder here knows.

#include <stddef.h>

typedef struct ccurl_decoder ccurl_decoder;

/// The content codings a decoder reads.
typedef enum {
    /// gzip (a zlib header is accepted too).
    CCURL_CODING_GZIP = 0,
    /// deflate: the zlib format, or raw deflate as some servers send.
    CCURL_CODING_DEFLATE = 1,
    /// Brotli (RFC 7932).
    CCURL_CODING_BR = 2,
    /// Zstandard (RFC 8878), one frame or several in a row; windows up to 8 MiB (RFC 9659).
    CCURL_CODING_ZSTD = 3,
} ccurl_coding;

/// Receives each piece of decoded output; returns 0 to stop the decoding.
typedef int (*ccurl_decode_sink)(void *context, const unsigned char *bytes, size_t count);

/// A decoder for `coding`; NULL for an unknown coding or when its library cannot start.
ccurl_decoder *ccurl_decoder_create(ccurl_coding coding);
void ccurl_decoder_free(ccurl_decoder *decoder);

/// Decodes `count` bytes, handing the output to `sink`. Returns 0 when more input is wanted,
/// 1 once the stream has ended (later bytes are ignored, as libcurl does; for zstd, later
/// bytes are the next frame and are decoded), -1 for data that is not a valid stream
/// (`ccurl_decoder_error` says why), -2 when the sink stopped.
int ccurl_decoder_write(ccurl_decoder *decoder, const unsigned char *input, size_t count,
                        ccurl_decode_sink sink, void *context);

/// Whether the stream reached its end: for gzip and zlib with its trailer checked, for br at
/// the stream's last meta-block, for zstd at the end of a frame (its checksum checked when it
/// has one) with no frame begun after it.
int ccurl_decoder_ended(const ccurl_decoder *decoder);

/// The library's reason for the last -1.
const char *ccurl_decoder_error(const ccurl_decoder *decoder);

#endif
