import CCurl
import Courier

/// Decodes a gzip or deflate response body as it arrives and knows whether the compressed
/// stream reached its end.
///
/// libcurl can decode bodies itself (`CURLOPT_ACCEPT_ENCODING`), but it never checks that the
/// stream ended: a gzip body cut short in whole HTTP framing (a Content-Length for the cut
/// bytes, or a chunked body ended properly) was handed over as complete, 38 % of it. So the
/// transport takes the raw bytes and decodes them here, with the zlib libcurl links too.
final class ContentDecoder {
    let coding: ResponseFraming.Coding
    private let inflater: OpaquePointer

    /// A decoder for `coding` (gzip or deflate); `nil` for any other coding, or without memory.
    init?(_ coding: ResponseFraming.Coding) {
        guard coding == .gzip || coding == .deflate,
            let inflater = ccurl_inflater_create(coding == .deflate ? 1 : 0)
        else { return nil }
        self.coding = coding
        self.inflater = inflater
    }

    deinit { ccurl_inflater_free(inflater) }

    /// Whether the stream ended, its trailer checked.
    var ended: Bool { ccurl_inflater_ended(inflater) != 0 }

    /// What became of the bytes given to ``decode(_:into:)``.
    enum Outcome {
        case decoded
        /// Not a valid stream; zlib's reason.
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
                ccurl_inflater_write(
                    inflater, base.assumingMemoryBound(to: UInt8.self), bytes.count,
                    { context, piece, count in
                        let consumer = context!.assumingMemoryBound(
                            to: ((UnsafeRawBufferPointer) -> Bool).self)
                        return consumer.pointee(UnsafeRawBufferPointer(start: piece, count: count))
                            ? 1 : 0
                    }, pointer)
            }
            switch status {
            case -1: return .corrupt(String(cString: ccurl_inflater_error(inflater)))
            case -2: return .refused
            default: return .decoded
            }
        }
    }
}
