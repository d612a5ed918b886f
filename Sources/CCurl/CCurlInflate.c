#include "CCurlInflate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

struct ccurl_inflater {
    z_stream stream;
    int deflate;
    int ended;
    /// Bytes taken so far: raw deflate is tried only when the very first bytes fail.
    size_t fed;
    char error[128];
    unsigned char out[64 * 1024];
};

ccurl_inflater *ccurl_inflater_create(int deflate) {
    ccurl_inflater *inflater = calloc(1, sizeof *inflater);
    if (inflater == NULL) return NULL;
    inflater->deflate = deflate;
    // 32 added to the window bits detects a gzip or a zlib header.
    if (inflateInit2(&inflater->stream, deflate ? MAX_WBITS : MAX_WBITS + 32) != Z_OK) {
        free(inflater);
        return NULL;
    }
    return inflater;
}

void ccurl_inflater_free(ccurl_inflater *inflater) {
    if (inflater == NULL) return;
    inflateEnd(&inflater->stream);
    free(inflater);
}

int ccurl_inflater_write(ccurl_inflater *inflater, const unsigned char *input, size_t count,
                         ccurl_inflate_sink sink, void *context) {
    if (inflater->ended) return 1;
    z_stream *z = &inflater->stream;
    z->next_in = (Bytef *)input;
    z->avail_in = (uInt)count;
    for (;;) {
        z->next_out = inflater->out;
        z->avail_out = sizeof inflater->out;
        int status = inflate(z, Z_NO_FLUSH);
        size_t produced = sizeof inflater->out - z->avail_out;
        if (produced > 0 && !sink(context, inflater->out, produced)) return -2;
        if (status == Z_STREAM_END) {
            inflater->ended = 1;
            return 1;
        }
        if (status == Z_DATA_ERROR && inflater->deflate == 1 && inflater->fed == 0 &&
            produced == 0) {
            // "deflate" without the zlib wrapper: what some servers send, and libcurl accepts.
            inflateEnd(z);
            if (inflateInit2(z, -MAX_WBITS) != Z_OK) break;
            inflater->deflate = 2;
            z->next_in = (Bytef *)input;
            z->avail_in = (uInt)count;
            continue;
        }
        if (status == Z_OK) {
            if (z->avail_out != 0) break;  // all the input is taken; wait for more
            continue;                      // more output is pending
        }
        if (status == Z_BUF_ERROR) break;  // no progress without more input
        snprintf(inflater->error, sizeof inflater->error, "%s",
                 z->msg != NULL ? z->msg : "not a valid compressed stream");
        return -1;
    }
    inflater->fed += count;
    return 0;
}

int ccurl_inflater_ended(const ccurl_inflater *inflater) { return inflater->ended; }

const char *ccurl_inflater_error(const ccurl_inflater *inflater) { return inflater->error; }
