import Foundation

extension DefaultAPIClient {
    /// Sends an API request and writes its body to `destination` as it arrives, through the
    /// client's whole stack (base URL, headers, auth and token refresh, redirects, hooks): the
    /// file is replaced only by a complete 2xx body (``HTTPClient/download(_:to:)``).
    /// ```swift
    /// let response = try await client.download(ExportRequest(), to: exportFile) { progress in
    ///     print(progress.fractionReceived ?? 0)
    /// }
    /// ```
    /// A status the request does not accept throws ``APIError`` (`.unacceptableStatus`, or
    /// the configuration's `mapError`) with the body in memory; the file is left as it was.
    /// - Parameter progress: told of bytes sent and received, on the transport's thread.
    @discardableResult
    public func download(
        _ request: some APIRequest, to destination: URL,
        progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws -> HTTPResponse {
        var httpRequest = try makeHTTPRequest(for: request)
        httpRequest.progress = progress.map(ProgressHandler.init)
        let response = try await httpClient.download(httpRequest, to: destination)
        try check(response, of: httpRequest, for: request)
        return response
    }

    /// Sends an API request through the client's whole stack and returns once the head of a
    /// response the request accepts has come, with the body to read as it arrives
    /// (``HTTPClient/stream(_:bufferLimit:)``).
    /// ```swift
    /// let response = try await client.stream(ChangesRequest(since: cursor))
    /// for try await chunk in response.body { parser.feed(chunk) }
    /// ```
    /// A status the request does not accept throws ``APIError`` with the first 64 KiB of the
    /// body (enough for an error document), and the rest is not read.
    public func stream(
        _ request: some APIRequest, bufferLimit: Int = 1 << 20,
        progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws -> HTTPStreamedResponse {
        var httpRequest = try makeHTTPRequest(for: request)
        httpRequest.progress = progress.map(ProgressHandler.init)
        let streamed = try await httpClient.stream(httpRequest, bufferLimit: bufferLimit)
        guard request.accepts(status: streamed.status) else {
            var body = Data()
            for try await chunk in streamed.body {
                body.append(chunk.prefix(Self.errorBodyLimit - body.count))
                if body.count >= Self.errorBodyLimit { break }
            }
            let response = HTTPResponse(
                status: streamed.status, headers: streamed.headers, body: body, url: streamed.url
            ).redacting(secretsOf: httpRequest)
            try check(response, of: httpRequest, for: request)
            return streamed  // `check` throws for a status the request does not accept
        }
        return streamed
    }

    /// Sends an API request whose body is sent with `progress` told of the bytes going out,
    /// then checks and decodes the response like ``perform(_:)``: uploads of files and
    /// multipart forms (`content: .file(…)`, `.multipart(…)`) are streamed from disk.
    public func perform<Endpoint: APIRequest>(
        _ request: Endpoint, progress: @escaping @Sendable (TransferProgress) -> Void
    ) async throws -> Endpoint.Response {
        var httpRequest = try makeHTTPRequest(for: request)
        httpRequest.progress = ProgressHandler(progress)
        return try await send(httpRequest, for: request).value
    }

    /// The most bytes of a refused streamed response kept for its error.
    static let errorBodyLimit = 64 << 10

    /// Throws the error `send` throws for a status `request` does not accept.
    private func check(
        _ response: HTTPResponse, of httpRequest: HTTPRequest, for request: some APIRequest
    ) throws {
        guard !request.accepts(status: response.status) else { return }
        if let mapped = configuration.mapError?(response) { throw mapped }
        throw APIError(unacceptable: response, of: httpRequest)
    }
}
