/// The checks of a response's framing that both transports make, and the words they fail with,
/// so that the same response fails alike on both (`docs/transports.md`, "Truncated responses").
///
/// Framing is the transport's job: a response whose header block, length or content coding
/// does not add up is not a response, and becomes an ``HTTPError`` of kind `.network`.
package enum ResponseFraming {
    /// The connection closed after the status line but before the blank line ending the fields.
    package static let cutHeadMessage =
        "the response ended inside its header block (the connection closed before the blank line)"

    /// The body's compressed stream stopped before its end (the HTTP framing itself was whole).
    package static func cutStreamMessage(_ coding: String) -> String {
        "the \(coding) stream ended before its end: the body is cut"
    }

    /// Why a `Content-Length` value cannot frame a body, or `nil` when it can: one or more
    /// digits fitting in 63 bits, or a list of equal such values (RFC 9110 §8.6). libcurl reads
    /// an overflowing length to the close and calls that a whole body.
    package static func contentLengthProblem(_ value: some StringProtocol) -> String? {
        // Nearly every response has one plain value: up to 18 digits always fit in 63 bits.
        // Checked on the bytes first, since the list parsing below cost a tenth of a small
        // request's time on the curl loop.
        let utf8 = value.utf8
        if !utf8.isEmpty, utf8.count <= 18, utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            return nil
        }
        let members = value.split(separator: ",", omittingEmptySubsequences: false).map {
            $0.trimmingBlanks
        }
        let valid =
            members.allSatisfy { member in
                !member.isEmpty && member.utf8.allSatisfy { (0x30...0x39).contains($0) }
                    && Int64(member) != nil
            } && Set(members).count == 1
        guard !valid else { return nil }
        let shown = value.count > 40 ? value.prefix(40) + "…" : Substring(value)
        return "the response's Content-Length \"\(shown)\" is not a number that fits"
    }

    /// A response body's content coding, as far as a transport can read it.
    package enum Coding: Equatable, Sendable {
        case identity
        case gzip
        case deflate
        case br
        case zstd
        /// A coding, or a list of codings, no transport here decodes.
        case unsupported(String)

        /// The coding's name in messages.
        package var name: String {
            switch self {
            case .identity: "identity"
            case .gzip: "gzip"
            case .deflate: "deflate"
            case .br: "br"
            case .zstd: "zstd"
            case .unsupported(let value): value
            }
        }
    }

    /// The coding named by a `Content-Encoding` value (`nil` or empty is identity).
    package static func coding(of value: String?) -> Coding {
        let codings = (value ?? "").split(separator: ",").map { $0.trimmingBlanks.lowercased() }
            .filter { !$0.isEmpty && $0 != "identity" }
        switch codings {
        case []: return .identity
        case ["gzip"], ["x-gzip"]: return .gzip
        case ["deflate"]: return .deflate
        case ["br"]: return .br
        case ["zstd"]: return .zstd
        default: return .unsupported(codings.joined(separator: ", "))
        }
    }

    /// The codings both transports offer and decode, in the words of messages.
    package static let decodedCodings = "gzip, deflate, br, zstd"

    /// A body in a coding no transport here decodes.
    package static func unsupportedCodingMessage(_ coding: Coding) -> String {
        "the body's Content-Encoding \"\(coding.name)\" is not one Courier decodes (\(decodedCodings))"
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs.
    fileprivate var trimmingBlanks: String {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !blank($0) }),
            let last = lastIndex(where: { !blank($0) })
        else { return "" }
        return String(self[first...last])
    }
}
