import Foundation

/// A failure of a server-sent event or JSON-lines stream that is not the transport's: a status
/// or content type that is not a stream, a line over the limit, a line that does not decode.
/// Transport failures stay ``HTTPError``s.
public struct StreamError: Error, Sendable, CustomStringConvertible {
    /// What class of failure this is. An open set: new kinds break no `switch`.
    public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The server answered with a status that is not 2xx; ``StreamError/status`` and
        /// ``StreamError/bodyPrefix`` say what it sent.
        public static let unacceptableStatus = Kind(rawValue: "unacceptableStatus")
        /// An event stream came with another `Content-Type` than `text/event-stream`.
        public static let unexpectedContentType = Kind(rawValue: "unexpectedContentType")
        /// A line (or an event's data) passed the stream's `maxLineLength`: the stream is
        /// stopped rather than letting a server fill memory.
        public static let lineTooLong = Kind(rawValue: "lineTooLong")
        /// A JSON line, or an event's data, did not decode into the asked type.
        public static let decoding = Kind(rawValue: "decoding")

        public var description: String { rawValue }
    }

    public var kind: Kind
    /// What went wrong, in words; never contains header values or credentials.
    public var message: String
    /// The URL of the stream, with any user name and password removed.
    public var url: URL?
    /// The response status, for `.unacceptableStatus` and `.unexpectedContentType`.
    public var status: Int?
    /// The first bytes of the body (at most ``bodyPrefixLimit``) of a response that is not a
    /// stream: enough to show the server's error.
    public var bodyPrefix: Data?
    /// The 1-based line of the stream where the failure was found, when there is one.
    public var line: Int?

    /// How many bytes of a refused response's body ``bodyPrefix`` keeps.
    public static let bodyPrefixLimit = 1024

    public init(
        _ kind: Kind, _ message: String, url: URL? = nil, status: Int? = nil,
        bodyPrefix: Data? = nil, line: Int? = nil
    ) {
        self.kind = kind
        self.message = message
        self.url = url.map(HTTPError.withoutCredentials)
        self.status = status
        self.bodyPrefix = bodyPrefix
        self.line = line
    }

    public var description: String {
        var text = "\(kind): "
        if let line { text += "line \(line): " }
        text += message
        if let url { text += " (\(url.absoluteString))" }
        return text
    }
}

extension StreamError: LocalizedError {
    /// The error's ``description``: without it, Foundation's `localizedDescription` says
    /// "The operation could not be completed" (trial II).
    public var errorDescription: String? { description }
}
