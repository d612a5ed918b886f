import Foundation

/// One event of a `text/event-stream` (WHATWG HTML, "Server-sent events").
/// ```swift
/// for try await event in client.events(HTTPRequest(url: feedURL)) {
///     if event.event == "completion" { print(try event.decode(Chunk.self).text) }
/// }
/// ```
public struct ServerSentEvent: Sendable, Hashable {
    /// The event's type: its `event` field, or `"message"` when it had none.
    public var event: String
    /// Its `data` lines, joined with `"\n"`.
    public var data: String
    /// The stream's last event id when this event was dispatched (an `id` field stays in force
    /// for the events after it); `nil` when none was set or it was set to empty.
    public var id: String?
    /// The reconnection time in milliseconds that a `retry` field in this event asked for.
    public var retry: Int?

    public init(event: String = "message", data: String, id: String? = nil, retry: Int? = nil) {
        self.event = event
        self.data = data
        self.id = id
        self.retry = retry
    }

    /// Decodes ``data`` as JSON, as streaming APIs (LLM completions, change feeds) send it.
    ///
    /// Throws ``StreamError`` with `.decoding`, naming the failing key.
    public func decode<Value: Decodable>(
        _ type: Value.Type, using decoder: JSONDecoder = JSONDecoder()
    ) throws -> Value {
        do {
            return try decoder.decode(type, from: Data(data.utf8))
        } catch let error as DecodingError {
            var context = "event \"\(event)\""
            if let id { context += " id \"\(id)\"" }
            throw StreamError(.decoding, "\(context): \(DecodingErrorText.describe(error))")
        }
    }
}
