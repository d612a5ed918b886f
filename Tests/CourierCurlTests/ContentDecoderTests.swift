import Courier
@testable import CourierCurl
import Foundation
import Testing

/// The curl transport's own decoders (``ContentDecoder`` over `CCurlDecode.c`), without a
/// network: each coding read whole however its bytes are split, a stream cut anywhere left
/// unended, and bytes that are no stream refused.
@Suite("ContentDecoder")
struct ContentDecoderTests {
    static let text = #"{"courier":"a body in four codings"}"#

    /// `text` in each coding, made with gzip(1), Python's zlib, brotli(1) and zstd(1).
    static let encoded: [(ResponseFraming.Coding, String)] = [
        (.gzip, "H4sIAAAAAAACA6tWSs4vLcpMLVKyUkpUSMpPqVTIzFNIA4opJOenZOalFyvVAgCjaV/GJAAAAA=="),
        (.deflate, "eNqrVkrOLy3KTC1SslJKVEjKT6lUyMxTSAOKKSTnp2TmpRcr1QIA6BkMvQ=="),
        (.br, "jxGAeyJjb3VyaWVyIjoiYSBib2R5IGluIGZvdXIgY29kaW5ncyJ9Aw=="),
        (.zstd, "KLUv/QRYIQEAeyJjb3VyaWVyIjoiYSBib2R5IGluIGZvdXIgY29kaW5ncyJ9RYIRGA=="),
    ]

    /// What decoding `bytes`, handed over in pieces of `step`, gives: the output, whether the
    /// stream ended, and why it was refused (the decoder's reason), if it was.
    static func decode(_ coding: ResponseFraming.Coding, _ bytes: Data, step: Int) throws -> (
        output: Data, ended: Bool, corrupt: String?
    ) {
        let decoder = try #require(ContentDecoder(coding))
        var output = Data()
        var start = 0
        while start < bytes.count {
            let piece = bytes[start..<min(start + step, bytes.count)]
            let outcome = piece.withUnsafeBytes { raw in
                decoder.decode(raw) { decoded in
                    output.append(contentsOf: decoded)
                    return true
                }
            }
            switch outcome {
            case .decoded: break
            case .corrupt(let reason): return (output, decoder.ended, reason)
            case .refused: Issue.record("the consumer took every piece")
            }
            start += step
        }
        return (output, decoder.ended, nil)
    }

    @Test(
        "each coding decodes whole and ends, in one piece or byte by byte",
        arguments: encoded.map(\.0))
    func whole(coding: ResponseFraming.Coding) throws {
        let bytes = try #require(Data(base64Encoded: Self.encoded.first { $0.0 == coding }!.1))
        for step in [1, 3, bytes.count] {
            let result = try Self.decode(coding, bytes, step: step)
            #expect(String(decoding: result.output, as: UTF8.self) == Self.text, "step \(step)")
            #expect(result.ended && result.corrupt == nil, "\(coding) step \(step)")
        }
    }

    @Test("a stream cut anywhere has not ended", arguments: encoded.map(\.0))
    func cut(coding: ResponseFraming.Coding) throws {
        let bytes = try #require(Data(base64Encoded: Self.encoded.first { $0.0 == coding }!.1))
        for length in 1..<bytes.count {
            let result = try Self.decode(coding, bytes.prefix(length), step: 1)
            #expect(!result.ended, "\(coding) cut to \(length) of \(bytes.count) bytes")
        }
    }

    @Test("bytes that are not a stream of the coding are refused", arguments: encoded.map(\.0))
    func corrupt(coding: ResponseFraming.Coding) throws {
        let result = try Self.decode(coding, Data(Self.text.utf8), step: 64)
        #expect(result.corrupt?.isEmpty == false, "\(coding): \(result)")
    }

    @Test("zstd frames may follow one another; a frame begun after one has not ended")
    func zstdFrames() throws {
        let frame = try #require(Data(base64Encoded: Self.encoded[3].1))
        let two = try Self.decode(.zstd, frame + frame, step: 5)
        #expect(String(decoding: two.output, as: UTF8.self) == Self.text + Self.text)
        #expect(two.ended)
        let begun = try Self.decode(.zstd, frame + frame.prefix(6), step: 5)
        #expect(!begun.ended && begun.corrupt == nil)
        // Bytes after a frame that begin no frame are not a zstd stream.
        let junk = try Self.decode(.zstd, frame + Data("junk".utf8), step: 64)
        #expect(junk.corrupt != nil, "\(junk)")
    }

    @Test("a zstd frame asking for a window over 8 MiB is refused (RFC 9659); 8 MiB is read")
    func zstdWindow() throws {
        // The first 20 bytes of zstd(1) output with --zstd=wlog=25 and wlog=23.
        let wide = try #require(Data(base64Encoded: "KLUv/QR4lRMBGlbRIhtwpUkhHXw="))
        #expect(try Self.decode(.zstd, wide, step: 20).corrupt != nil, "a 32 MiB window")
        let allowed = try #require(Data(base64Encoded: "KLUv/QRolRMBGlbRIhtwpUkhHXw="))
        let result = try Self.decode(.zstd, allowed, step: 20)
        #expect(result.corrupt == nil && !result.ended)
    }

    @Test("only the codings the transport checks get a decoder")
    func codings() {
        #expect(ContentDecoder(.identity) == nil)
        #expect(ContentDecoder(.unsupported("compress")) == nil)
        #expect(ResponseFraming.coding(of: "br") == .br)
        #expect(ResponseFraming.coding(of: " ZSTD ") == .zstd)
        #expect(ResponseFraming.coding(of: "gzip, br") == .unsupported("gzip, br"))
    }
}
