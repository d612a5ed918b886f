import Foundation

extension HTTPClient {
    /// The server-sent events of `request`, parsed as they arrive.
    /// ```swift
    /// for try await event in client.events(HTTPRequest(url: feedURL), reconnect: .upTo(5)) {
    ///     let change = try event.decode(Change.self)
    /// }
    /// ```
    /// Sends `Accept: text/event-stream` unless the request has an `Accept`. A status that is
    /// not 2xx throws ``StreamError`` with `.unacceptableStatus` (its ``StreamError/status``
    /// and ``StreamError/bodyPrefix`` say what the server sent), a `Content-Type` other than
    /// `text/event-stream` throws `.unexpectedContentType`, and a 204 ends the sequence.
    ///
    /// The request's timeout bounds each connection, body included: give a long-lived feed a
    /// long one, or let `reconnect` open it again when it times out.
    /// - Parameters:
    ///   - reconnect: whether a stream that ends or fails is opened again, with `Last-Event-ID`
    ///     (``ServerSentEvents/Reconnection``; none by default).
    ///   - maxLineLength: the longest line, and the most data one event may gather, in bytes;
    ///     past it the sequence throws `.lineTooLong`.
    public func events(
        _ request: HTTPRequest, reconnect: ServerSentEvents.Reconnection = .never,
        maxLineLength: Int = 1 << 20
    ) -> ServerSentEvents {
        ServerSentEvents(
            source: .sending(request, through: self, accept: ServerSentEvents.accept),
            reconnect: reconnect, maxLineLength: maxLineLength)
    }

    /// The values of a JSON-lines body (`application/x-ndjson`, `application/jsonl`), one per
    /// line, decoded as they arrive.
    /// ```swift
    /// for try await change in client.lines(of: Change.self, HTTPRequest(url: changesURL)) {
    ///     apply(change)
    /// }
    /// ```
    /// Sends an `Accept` for JSON lines unless the request has one. A status that is not 2xx
    /// throws ``StreamError`` with `.unacceptableStatus`; the content type is not checked
    /// (servers send JSON lines as `application/json` and `text/plain` too).
    public func lines<Value: Decodable>(
        of type: Value.Type, _ request: HTTPRequest, decoder: JSONDecoder = JSONDecoder(),
        maxLineLength: Int = 1 << 20
    ) -> JSONLines<Value> {
        JSONLines(
            source: .sending(request, through: self, accept: JSONLines<Value>.accept),
            decoder: decoder, maxLineLength: maxLineLength)
    }
}

extension HTTPStreamedResponse {
    /// The body read as server-sent events, without checking the status or content type and
    /// without reconnecting (for a response from ``HTTPClient/stream(_:bufferLimit:)``).
    public func events(maxLineLength: Int = 1 << 20) -> ServerSentEvents {
        ServerSentEvents(source: .response(self), reconnect: .never, maxLineLength: maxLineLength)
    }

    /// The body read as JSON lines, without checking the status or content type.
    public func lines<Value: Decodable>(
        of type: Value.Type, decoder: JSONDecoder = JSONDecoder(), maxLineLength: Int = 1 << 20
    ) -> JSONLines<Value> {
        JSONLines(source: .response(self), decoder: decoder, maxLineLength: maxLineLength)
    }
}

extension ServerSentEvents {
    static let accept = "text/event-stream"
}

extension JSONLines {
    static var accept: String {
        "application/x-ndjson, application/jsonl, application/json-seq, application/json;q=0.9"
    }
}
