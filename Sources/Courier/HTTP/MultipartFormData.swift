import Foundation

/// A `multipart/form-data` body (RFC 7578): text fields and files, in order. File parts are
/// streamed from disk when sent, never read whole.
/// ```swift
/// var form = MultipartFormData()
/// form.append(field: "title", "Holiday")
/// form.append(file: photoURL, name: "photo", contentType: "image/jpeg")
/// request.setBody(form)   // or APIRequestBody.multipart(form)
/// ```
public struct MultipartFormData: Sendable, Hashable {
    /// The delimiter between parts; random by default, so it cannot occur in a field by chance.
    public let boundary: String
    private var pieces: [StreamedBody.Part] = []

    /// A form with a random boundary, or `boundary` (1 to 70 characters of RFC 2046's set).
    public init(boundary: String = "courier-" + UUID().uuidString.lowercased()) {
        self.boundary = boundary
    }

    /// The `Content-Type` header value to send with the body.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// Appends a text field.
    public mutating func append(field name: String, _ value: String) {
        pieces.append(.data(head(name: name, filename: nil, contentType: nil)))
        pieces.append(.data(Data(value.utf8)))
        pieces.append(.data(Data("\r\n".utf8)))
    }

    /// Appends bytes as a file part named `filename`.
    public mutating func append(
        data: Data, name: String, filename: String,
        contentType: String = "application/octet-stream"
    ) {
        pieces.append(.data(head(name: name, filename: filename, contentType: contentType)))
        pieces.append(.data(data))
        pieces.append(.data(Data("\r\n".utf8)))
    }

    /// Appends the file at `url`, read as it is sent; `filename` defaults to its last path
    /// component.
    public mutating func append(
        file url: URL, name: String, filename: String? = nil,
        contentType: String = "application/octet-stream"
    ) {
        let filename = filename ?? url.lastPathComponent
        pieces.append(.data(head(name: name, filename: filename, contentType: contentType)))
        pieces.append(.file(url))
        pieces.append(.data(Data("\r\n".utf8)))
    }

    /// The body: every part, then the closing delimiter. Adjacent bytes are joined, so a
    /// transport reads few pieces.
    public var body: StreamedBody {
        var parts: [StreamedBody.Part] = []
        for piece in pieces + [.data(Data("--\(boundary)--\r\n".utf8))] {
            if case .data(let next) = piece, case .data(let last)? = parts.last {
                parts[parts.count - 1] = .data(last + next)
            } else {
                parts.append(piece)
            }
        }
        return StreamedBody(parts: parts)
    }

    /// A part's delimiter and headers. Quotes, CR and LF in names are percent-encoded, as
    /// browsers do (WHATWG), so a name cannot end the header early.
    private func head(name: String, filename: String?, contentType: String?) -> Data {
        var text = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(Self.escape(name))\""
        if let filename { text += "; filename=\"\(Self.escape(filename))\"" }
        text += "\r\n"
        if let contentType { text += "Content-Type: \(Self.escape(contentType))\r\n" }
        return Data((text + "\r\n").utf8)
    }

    static func escape(_ text: String) -> String {
        ScalarEscaping.escape(text) { scalar in
            switch scalar {
            case "\"": .replace("%22")
            case "\r": .replace("%0D")
            case "\n": .replace("%0A")
            default: .keep
            }
        }
    }
}

extension HTTPRequest {
    /// Sends `form` as the body, streamed, with its `Content-Type`.
    public mutating func setBody(_ form: MultipartFormData) {
        body = nil
        streamedBody = form.body
        headers.replaceOrAdd("Content-Type", form.contentType)
    }
}
