import Foundation

/// A request body sent from its parts as the transport asks for bytes: files are read in
/// chunks, never whole, so a 10 GiB upload costs kilobytes of memory.
///
/// The length is known before sending (the sum of the parts, files measured when the request
/// starts), so both transports send `Content-Length` and the same bytes, never chunked.
/// ```swift
/// var request = HTTPRequest(url: uploadURL, method: .put)
/// request.streamedBody = .file(URL(fileURLWithPath: "backup.tar"))
/// ```
public struct StreamedBody: Sendable, Hashable {
    /// One piece of the body, in order.
    public enum Part: Sendable, Hashable {
        /// These bytes.
        case data(Data)
        /// The whole file at this URL, read as it is sent.
        case file(URL)
    }

    public var parts: [Part]

    public init(parts: [Part]) { self.parts = parts }

    /// The whole file at `url`.
    public static func file(_ url: URL) -> StreamedBody { StreamedBody(parts: [.file(url)]) }

    /// "a body streamed from 3 parts", for descriptions (the bytes are never shown).
    var summary: String {
        "a body streamed from \(parts.count) part\(parts.count == 1 ? "" : "s")"
    }

    /// The one file this body is, when it is exactly one file.
    var onlyFile: URL? {
        if parts.count == 1, case .file(let url) = parts[0] { return url }
        return nil
    }
}
