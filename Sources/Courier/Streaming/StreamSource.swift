import Foundation

/// Where a stream's bytes come from: one response already open, or a way to open one (again,
/// for a reconnection) that has already checked the status.
enum StreamSource: Sendable {
    case response(HTTPStreamedResponse)
    /// Opens the stream, sending `Last-Event-ID` when it is given.
    case connect(@Sendable (_ lastEventID: String?) async throws -> HTTPStreamedResponse)

    /// A source that sends `request` through `client`, with `accept` as its `Accept` unless
    /// the caller set one, and refuses a status that is not 2xx.
    static func sending(_ request: HTTPRequest, through client: any HTTPClient, accept: String)
        -> StreamSource
    {
        var request = request
        if !request.headers.contains("Accept") { request.headers.add("Accept", accept) }
        return .connect { [request] lastEventID in
            var attempt = request
            if let lastEventID { attempt.headers.replaceOrAdd("Last-Event-ID", lastEventID) }
            let response = try await client.stream(attempt)
            guard response.isSuccess else {
                throw StreamError(
                    .unacceptableStatus, "the stream was answered with status \(response.status)",
                    url: attempt.displayURL, status: response.status,
                    bodyPrefix: await response.bodyPrefix())
            }
            return response
        }
    }
}

extension HTTPStreamedResponse {
    /// The first bytes of the body (at most ``StreamError/bodyPrefixLimit``), to show what a
    /// response that is not a stream said; a failure while reading ends the prefix.
    func bodyPrefix() async -> Data {
        var prefix = Data()
        var chunks = body.makeAsyncIterator()
        while prefix.count < StreamError.bodyPrefixLimit, let chunk = try? await chunks.next() {
            prefix.append(chunk)
        }
        return prefix.prefix(StreamError.bodyPrefixLimit)
    }

    /// The media type of `Content-Type`, lowercased and without parameters.
    var mediaType: String? {
        headers["content-type"].map {
            $0.split(separator: ";", maxSplits: 1).first.map(String.init)?
                .trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        }
    }
}
