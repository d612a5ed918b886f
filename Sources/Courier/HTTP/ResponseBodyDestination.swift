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
