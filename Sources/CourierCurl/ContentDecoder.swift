import CCurl
import Courier

/// Decodes a gzip, deflate, br or zstd response body as it arrives and knows whether the
/// compressed stream reached its end.
///
/// libcurl can decode bodies itself (`CURLOPT_ACCEPT_ENCODING`), but it never checks that the
/// stream ended: a body cut short in whole HTTP framing (a Content-Length for the cut bytes, or
/// a chunked body ended properly) was handed over as complete, 38 % of it, in every coding
/// (curl 7.88). So the transport takes the raw bytes and decodes them here
/// (`CCurlDecode.c`), with the zlib, libbrotlidec and libzstd that libcurl links too.
final class ContentDecoder {
    let coding: ResponseFraming.Coding
    private let decoder: OpaquePointer

    /// A decoder for `coding` (gzip, deflate, br or zstd); `nil` for any other coding, or
    /// without memory.
    init?(_ coding: ResponseFraming.Coding) {
        let kind: ccurl_coding
        switch coding {
        case .gzip: kind = CCURL_CODING_GZIP
        case .deflate: kind = CCURL_CODING_DEFLATE
        case .br: kind = CCURL_CODING_BR
        case .zstd: kind = CCURL_CODING_ZSTD
        case .identity, .unsupported: return nil
        }
        guard let decoder = ccurl_decoder_create(kind) else { return nil }
        self.coding = coding
        self.decoder = decoder
    }

    deinit { ccurl_decoder_free(decoder) }

    /// Whether the stream ended: gzip's and zlib's trailer checked, brotli's last meta-block
    /// decoded, a zstd frame finished (its checksum checked when it has one) with no other
    /// begun after it.
    var ended: Bool { ccurl_decoder_ended(decoder) != 0 }

    /// What became of the bytes given to ``decode(_:into:)``.
    enum Outcome {
        case decoded
        /// Not a valid stream; the decoder's reason.
        case corrupt(String)
        /// The consumer refused a decoded piece.
        case refused
    }

    /// Decodes `bytes`, handing each decoded piece to `consumer`, which returns whether it
    /// took it.
    func decode(_ bytes: UnsafeRawBufferPointer, into consumer: (UnsafeRawBufferPointer) -> Bool)
        -> Outcome
    {
        guard let base = bytes.baseAddress else { return .decoded }
        return withoutActuallyEscaping(consumer) { consumer in
            var box = consumer
            let status = withUnsafeMutablePointer(to: &box) { pointer in
                ccurl_decoder_write(
                    decoder, base.assumingMemoryBound(to: UInt8.self), bytes.count,
                    { context, piece, count in
                        let consumer = context!.assumingMemoryBound(
                            to: ((UnsafeRawBufferPointer) -> Bool).self)
                        return consumer.pointee(UnsafeRawBufferPointer(start: piece, count: count))
                            ? 1 : 0
                    }, pointer)
            }
            switch status {
            case -1: return .corrupt(String(cString: ccurl_decoder_error(decoder)))
            case -2: return .refused
            default: return .decoded
            }
        }
    }
}
