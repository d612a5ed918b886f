import Foundation

/// The fuzz entry point for the stream parsers (`courier-fuzz events`), which read whatever a
/// server sends: the bytes go through the event parser and the JSON-lines decoder, cut in two
/// where the first byte says, with a small line limit so that the limit's path is taken too.
package enum StreamFuzzing {
    package static func events(_ data: Data) {
        guard let first = data.first else { return }
        let bytes = Array(data.dropFirst())
        let cut = Int(first) % (bytes.count + 1)
        let limit = Int(first) % 2 == 0 ? 1 << 20 : 64
        var parser = ServerSentEventParser(maxLineLength: limit)
        var lines = JSONLinesDecoder(of: [String: String].self, maxLineLength: limit)
        for piece in [bytes[..<cut], bytes[cut...]] {
            _ = try? parser.feed(piece)
            _ = try? lines.feed(piece)
        }
        parser.finish()
        _ = try? lines.finish()
        _ = DigestChallenge.best(in: ["WWW-Authenticate": String(decoding: bytes, as: UTF8.self)])
    }
}
