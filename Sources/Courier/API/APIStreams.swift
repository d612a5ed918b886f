import Foundation

extension DefaultAPIClient {
    /// The server-sent events of `request`, with the client's base URL, headers, auth and hooks.
    /// ```swift
    /// struct Completions: APIRequest {
    ///     typealias Response = Data           // not used: the events are the answer
    ///     let prompt: Prompt
    ///     var method: HTTPMethod { .post }
    ///     var path: String { "/v1/completions" }
    ///     var content: APIRequestBody? { .json(prompt) }
    /// }
    /// for try await event in client.events(for: Completions(prompt: prompt)) {
    ///     if event.data == "[DONE]" { break }
    ///     print(try event.decode(Token.self).text, terminator: "")
    /// }
    /// ```
    /// A status the request does not accept throws ``APIError`` with `.unacceptableStatus`
    /// (or what the configuration's `mapError` makes of it), its response holding the first
    /// bytes of the body. Otherwise as ``HTTPClient/events(_:reconnect:maxLineLength:)``:
    /// `Accept: text/event-stream` unless set, the content type checked, a 204 ends the
    /// sequence, and `reconnect` opens it again with `Last-Event-ID`.
    public func events(
        for request: some APIRequest, reconnect: ServerSentEvents.Reconnection = .never,
        maxLineLength: Int = 1 << 20
    ) -> ServerSentEvents {
        ServerSentEvents(
            source: source(for: request, accept: ServerSentEvents.accept),
            reconnect: reconnect, maxLineLength: maxLineLength)
    }

    /// The values of a JSON-lines answer to `request` (`application/x-ndjson`,
    /// `application/jsonl`), one per line, decoded with the configuration's decoder as they
    /// arrive.
    /// ```swift
    /// for try await change in client.lines(of: Change.self, for: WatchChanges(since: cursor)) {
    ///     apply(change)
    /// }
    /// ```
    /// A status the request does not accept throws ``APIError`` as ``perform(_:)`` does; a line
    /// that does not decode throws ``StreamError`` with `.decoding` and its line number.
    public func lines<Value: Decodable>(
        of type: Value.Type, for request: some APIRequest, maxLineLength: Int = 1 << 20
    ) -> JSONLines<Value> {
        JSONLines(
            source: source(for: request, accept: JSONLines<Value>.accept),
            decoder: configuration.decoder, maxLineLength: maxLineLength)
    }

    private func source(for request: some APIRequest, accept: String) -> StreamSource {
        .connect { lastEventID in
            var httpRequest = try makeHTTPRequest(for: request)
            if !httpRequest.headers.contains("Accept") { httpRequest.headers.add("Accept", accept) }
            if let lastEventID { httpRequest.headers.replaceOrAdd("Last-Event-ID", lastEventID) }
            let response = try await httpClient.stream(httpRequest)
            guard request.accepts(status: response.status) else {
                let refused = HTTPResponse(
                    status: response.status, headers: response.headers,
                    body: await response.bodyPrefix(), url: response.url)
                if let mapped = configuration.mapError?(refused) { throw mapped }
                throw APIError(unacceptable: refused, of: httpRequest)
            }
            return response
        }
    }
}
