#include "CCurlDecode.h"

#include <brotli/decode.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

/// The largest zstd window accepted, as a power of two: 8 MiB, what RFC 9659 says a decoder of
/// the "zstd" content coding must support and an encoder must not pass. libzstd's own default
/// (128 MiB) would let one response make the transport allocate 128 MiB.
#define CCURL_ZSTD_WINDOW_LOG_MAX 23

struct ccurl_decoder {
    ccurl_coding coding;
    int ended;
    char error[128];
    /// gzip and deflate.
    z_stream zlib;
    /// 1 for the zlib format, 2 once it turned out to be raw deflate (deflate only).
    int deflate;
    /// Bytes taken so far: raw deflate is tried only when the very first bytes fail.
    size_t fed;
    BrotliDecoderState *brotli;
    ZSTD_DCtx *zstd;
    unsigned char out[64 * 1024];
};

ccurl_decoder *ccurl_decoder_create(ccurl_coding coding) {
    ccurl_decoder *decoder = calloc(1, sizeof *decoder);
    if (decoder == NULL) return NULL;
    decoder->coding = coding;
    switch (coding) {
    case CCURL_CODING_GZIP:
    case CCURL_CODING_DEFLATE:
        decoder->deflate = coding == CCURL_CODING_DEFLATE;
        // 32 added to the window bits detects a gzip or a zlib header.
        if (inflateInit2(&decoder->zlib, decoder->deflate ? MAX_WBITS : MAX_WBITS + 32) ==
            Z_OK)
            return decoder;
        break;
    case CCURL_CODING_BR:
        decoder->brotli = BrotliDecoderCreateInstance(NULL, NULL, NULL);
        if (decoder->brotli != NULL) return decoder;
        break;
    case CCURL_CODING_ZSTD:
        decoder->zstd = ZSTD_createDCtx();
        if (decoder->zstd != NULL &&
            !ZSTD_isError(ZSTD_DCtx_setParameter(decoder->zstd, ZSTD_d_windowLogMax,
                                                 CCURL_ZSTD_WINDOW_LOG_MAX))) {
            // Nothing has begun: an empty body is no frame cut short, as for the others the
            // transport only makes a decoder once a body byte came.
            return decoder;
        }
        ZSTD_freeDCtx(decoder->zstd);
        break;
    }
    free(decoder);
    return NULL;
}

void ccurl_decoder_free(ccurl_decoder *decoder) {
    if (decoder == NULL) return;
    switch (decoder->coding) {
    case CCURL_CODING_GZIP:
    case CCURL_CODING_DEFLATE: inflateEnd(&decoder->zlib); break;
    case CCURL_CODING_BR: BrotliDecoderDestroyInstance(decoder->brotli); break;
    case CCURL_CODING_ZSTD: ZSTD_freeDCtx(decoder->zstd); break;
    }
    free(decoder);
}

static int fail(ccurl_decoder *decoder, const char *reason) {
    snprintf(decoder->error, sizeof decoder->error, "%s",
             reason != NULL ? reason : "not a valid compressed stream");
    return -1;
}

static int inflate_write(ccurl_decoder *decoder, const unsigned char *input, size_t count,
                         ccurl_decode_sink sink, void *context) {
    z_stream *z = &decoder->zlib;
    z->next_in = (Bytef *)input;
    z->avail_in = (uInt)count;
    for (;;) {
        z->next_out = decoder->out;
        z->avail_out = sizeof decoder->out;
        int status = inflate(z, Z_NO_FLUSH);
        size_t produced = sizeof decoder->out - z->avail_out;
        if (produced > 0 && !sink(context, decoder->out, produced)) return -2;
        if (status == Z_STREAM_END) {
            decoder->ended = 1;
            return 1;
        }
        if (status == Z_DATA_ERROR && decoder->deflate == 1 && decoder->fed == 0 &&
            produced == 0) {
            // "deflate" without the zlib wrapper: what some servers send, and libcurl accepts.
            inflateEnd(z);
            if (inflateInit2(z, -MAX_WBITS) != Z_OK) break;
            decoder->deflate = 2;
            z->next_in = (Bytef *)input;
            z->avail_in = (uInt)count;
            continue;
        }
        if (status == Z_OK) {
            if (z->avail_out != 0) break;  // all the input is taken; wait for more
            continue;                      // more output is pending
        }
        if (status == Z_BUF_ERROR) break;  // no progress without more input
        return fail(decoder, z->msg);
    }
    decoder->fed += count;
    return 0;
}

static int brotli_write(ccurl_decoder *decoder, const unsigned char *input, size_t count,
                        ccurl_decode_sink sink, void *context) {
    size_t available_in = count;
    const uint8_t *next_in = input;
    for (;;) {
        size_t available_out = sizeof decoder->out;
        uint8_t *next_out = decoder->out;
        BrotliDecoderResult result = BrotliDecoderDecompressStream(
            decoder->brotli, &available_in, &next_in, &available_out, &next_out, NULL);
        size_t produced = sizeof decoder->out - available_out;
        if (produced > 0 && !sink(context, decoder->out, produced)) return -2;
        switch (result) {
        case BROTLI_DECODER_RESULT_SUCCESS:
            // The stream's last meta-block is decoded: its end, which brotli marks itself.
            decoder->ended = 1;
            return 1;
        case BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT: continue;
        case BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT: return 0;
        case BROTLI_DECODER_RESULT_ERROR:
        default:
            snprintf(decoder->error, sizeof decoder->error, "brotli's error %s",
                     BrotliDecoderErrorString(BrotliDecoderGetErrorCode(decoder->brotli)));
            return -1;
        }
    }
}

static int zstd_write(ccurl_decoder *decoder, const unsigned char *input, size_t count,
                      ccurl_decode_sink sink, void *context) {
    ZSTD_inBuffer in = {input, count, 0};
    for (;;) {
        ZSTD_outBuffer out = {decoder->out, sizeof decoder->out, 0};
        size_t hint = ZSTD_decompressStream(decoder->zstd, &out, &in);
        if (ZSTD_isError(hint)) return fail(decoder, ZSTD_getErrorName(hint));
        if (out.pos > 0 && !sink(context, decoder->out, out.pos)) return -2;
        // 0: a frame is decoded, its checksum checked, and all its output flushed. Bytes
        // after it begin another frame (zstd's frames may follow one another).
        decoder->ended = hint == 0;
        if (hint != 0 && out.pos == out.size) continue;  // more output may be pending
        if (in.pos == in.size) break;                    // all the input is taken
    }
    return decoder->ended;
}

int ccurl_decoder_write(ccurl_decoder *decoder, const unsigned char *input, size_t count,
                        ccurl_decode_sink sink, void *context) {
    if (count == 0) return decoder->ended;
    switch (decoder->coding) {
    case CCURL_CODING_GZIP:
    case CCURL_CODING_DEFLATE:
        if (decoder->ended) return 1;
        return inflate_write(decoder, input, count, sink, context);
    case CCURL_CODING_BR:
        if (decoder->ended) return 1;
        return brotli_write(decoder, input, count, sink, context);
    case CCURL_CODING_ZSTD: return zstd_write(decoder, input, count, sink, context);
    }
    return fail(decoder, "unknown coding");
}

int ccurl_decoder_ended(const ccurl_decoder *decoder) { return decoder->ended; }

const char *ccurl_decoder_error(const ccurl_decoder *decoder) { return decoder->error; }
