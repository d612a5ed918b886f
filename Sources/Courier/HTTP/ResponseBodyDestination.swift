import Foundation

/// Where a transport puts a response body (``HTTPRequest/bodyDestination``).
public enum ResponseBodyDestination: Sendable, Hashable {
    /// In memory, in ``HTTPResponse/body``, up to the client's `maxResponseBytes`.
    case memory
    /// Written to this file as it arrives, so that memory stays flat however large the body.
    ///
    /// The file is created or truncated when the request starts (a symbolic link there is
    /// refused) and holds the body of the final response of that request, whatever its status;
    /// ``HTTPResponse/body`` stays empty and ``HTTPResponse/savedBody`` says how many bytes came.
    /// The client's `maxResponseBytes` does not apply: the request's deadline bounds it. To
    /// replace a file only when a whole 2xx body has arrived, use
    /// ``HTTPClient/download(_:to:)``.
    case file(URL)
    /// Handed chunk by chunk to the reader of ``HTTPClient/stream(_:bufferLimit:)``, which
    /// makes the channel; ``HTTPResponse/body`` stays empty.
    case stream(BodyChunkChannel)

    /// The channel a transport hands chunks to, for `.stream`.
    package var channel: BodyChunkChannel? {
        if case .stream(let channel) = self { channel } else { nil }
    }
}

extension HTTPRequest {
    /// This request for one attempt of a middleware that may discard the response (a redirect
    /// it follows, a status it retries, a rejected token): a streamed body goes through an
    /// attempt's channel (``BodyChunkChannel/attempt(keeping:)``), which `keeps` decides on
    /// when the head arrives. A body in memory or in a file needs nothing (a file is started
    /// afresh by each attempt), and the request comes back as it is, with no channel.
    package func attempt(
        keeping keeps: @escaping @Sendable (_ status: Int, _ headers: HTTPHeaders) -> Bool
    ) -> (request: HTTPRequest, channel: BodyChunkChannel?) {
        guard let parent = bodyDestination.channel else { return (self, nil) }
        let channel = parent.attempt(keeping: keeps)
        var request = self
        request.bodyDestination = .stream(channel)
        return (request, channel)
    }
}
