import Foundation

/// Turns JSON lines (`application/x-ndjson`, `application/jsonl`) into values, chunk by chunk:
/// one value per line, blank lines skipped.
///
/// Pure and synchronous: feed it chunks as they come, in any cutting.
/// ```swift
/// var decoder = JSONLinesDecoder(of: Change.self)
/// for try await chunk in response.body {
///     for change in try decoder.feed(chunk) { apply(change) }
/// }
/// for change in try decoder.finish() { apply(change) }
/// ```
/// Lines end with LF, CRLF or CR; a last line without an ending is decoded too. A JSON text
/// sequence (`application/json-seq`, RFC 7464) reads the same: its record separators are
/// dropped. A line that does not decode throws ``StreamError`` with `.decoding` and its
/// line number; one longer than `maxLineLength` bytes throws `.lineTooLong` before it has all
/// arrived.
public struct JSONLinesDecoder<Value: Decodable>: Sendable {
    private var splitter: LineSplitter
    private let decoder: JSONDecoder

    /// - Parameters:
    ///   - maxLineLength: the longest line, in bytes, that is read before the stream is stopped.
    public init(
        of type: Value.Type = Value.self, decoder: JSONDecoder = JSONDecoder(),
        maxLineLength: Int = 1 << 20
    ) {
        self.splitter = LineSplitter(maxLineLength: maxLineLength)
        self.decoder = decoder
    }

    /// Reads a chunk and returns the values of the lines it completes.
    public mutating func feed(_ chunk: some Collection<UInt8>) throws -> [Value] {
        var values: [Value] = []
        let decoder = self.decoder
        try splitter.feed(chunk) { line, number in
            if let value = try Self.decode(line, number: number, using: decoder) {
                values.append(value)
            }
        }
        return values
    }

    /// Ends the stream and returns the value of a last line that had no line ending.
    public mutating func finish() throws -> [Value] {
        guard let line = splitter.finish() else { return [] }
        return try Self.decode(line, number: splitter.lineCount, using: decoder).map { [$0] } ?? []
    }

    private static func decode(_ line: ArraySlice<UInt8>, number: Int, using decoder: JSONDecoder)
        throws -> Value?
    {
        // RFC 7464 starts each record with RS; JSON whitespace alone makes a blank line.
        let text = line.drop { $0 == 0x1E }
        guard text.contains(where: { !Self.isWhitespace($0) }) else { return nil }
        do {
            return try decoder.decode(Value.self, from: Data(text))
        } catch let error as DecodingError {
            throw StreamError(.decoding, DecodingErrorText.describe(error), line: number)
        }
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}
