import Foundation

/// The values of a JSON-lines body (`application/x-ndjson`, `application/jsonl`) as an
/// `AsyncSequence`, decoded line by line as they arrive
/// (``HTTPClient/lines(of:_:decoder:maxLineLength:)``,
/// ``DefaultAPIClient/lines(of:for:maxLineLength:)``,
/// ``HTTPStreamedResponse/lines(of:decoder:maxLineLength:)``).
///
/// The request is sent when the loop asks for the first value; blank lines are skipped. A line
/// that does not decode throws ``StreamError`` with `.decoding` and its line number. Leaving
/// the loop, or cancelling its task, cancels the transfer. Iterate it once.
public struct JSONLines<Value: Decodable>: AsyncSequence, Sendable {
    public typealias Element = Value

    let source: StreamSource
    let decoder: JSONDecoder
    let maxLineLength: Int

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(
            source: source,
            decoder: JSONLinesDecoder(
                of: Value.self, decoder: decoder, maxLineLength: maxLineLength))
    }

    /// Reads chunks and decodes the lines they complete.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private let source: StreamSource
        private var decoder: JSONLinesDecoder<Value>
        private var body: HTTPBodyChunks.AsyncIterator?
        private var pending: [Value] = []
        private var opened = false
        private var done = false

        init(source: StreamSource, decoder: JSONLinesDecoder<Value>) {
            self.source = source
            self.decoder = decoder
        }

        public mutating func next() async throws -> Value? {
            while true {
                if !pending.isEmpty { return pending.removeFirst() }
                if done { return nil }
                done = true  // until a chunk comes; a throw ends the sequence too
                if !opened {
                    opened = true
                    switch source {
                    case .response(let response): body = response.body.makeAsyncIterator()
                    case .connect(let connect):
                        body = try await connect(nil).body.makeAsyncIterator()
                    }
                }
                if let chunk = try await body?.next() {
                    pending = try decoder.feed(chunk)
                    done = false
                } else {
                    body = nil
                    pending = try decoder.finish()
                }
            }
        }
    }
}
