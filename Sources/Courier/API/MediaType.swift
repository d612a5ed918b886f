import Foundation

/// A `Content-Type` value taken apart: `text/plain; charset=iso-8859-1` is the type `text`, the
/// subtype `plain` and the `charset` parameter.
///
/// Type, subtype and parameter names are lowercased (RFC 9110 §8.3.1 makes them
/// case-insensitive); parameter values keep their case, without quotes.
struct MediaType: Sendable, Hashable {
    let type: String
    let subtype: String
    let parameters: [String: String]

    /// `nil` when `text` has no `type/subtype`.
    init?(_ text: String) {
        var pieces = text.split(separator: ";", omittingEmptySubsequences: false)[...]
        guard let essence = pieces.popFirst() else { return nil }
        let parts = essence.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        type = parts[0].trimmingCharacters(in: .whitespaces).lowercased()
        subtype = parts[1].trimmingCharacters(in: .whitespaces).lowercased()
        guard !type.isEmpty, !subtype.isEmpty else { return nil }
        var parameters: [String: String] = [:]
        for piece in pieces {
            guard let equals = piece.firstIndex(of: "=") else { continue }
            let name = piece[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            var value = piece[piece.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())
            }
            // The first of repeated parameters wins, as most parsers do.
            if !name.isEmpty, parameters[name] == nil { parameters[name] = value }
        }
        self.parameters = parameters
    }

    /// `type/subtype`, without parameters.
    var essence: String { "\(type)/\(subtype)" }

    /// The `charset` parameter, lowercased.
    var charset: String? { parameters["charset"]?.lowercased() }

    /// Whether this is JSON: `application/json`, `text/json` or any `+json` subtype
    /// (`application/problem+json`, `application/vnd.github+json`).
    var isJSON: Bool { subtype == "json" || subtype.hasSuffix("+json") }

    /// Whether this type matches `pattern`. The pattern may use `*` for the type (`*/*`), the
    /// subtype (`application/*`) or a subtype's name before a structured suffix
    /// (`application/*+json`). Parameters, on either side, are not compared.
    func matches(_ pattern: MediaType) -> Bool {
        if pattern.type != "*" && pattern.type != type { return false }
        if pattern.subtype == "*" { return true }
        if pattern.subtype.hasPrefix("*+") {
            return subtype.hasSuffix(pattern.subtype.dropFirst())
        }
        return pattern.subtype == subtype
    }
}

extension HTTPResponse {
    /// The response's `Content-Type`, parsed; `nil` when absent or not `type/subtype`.
    var mediaType: MediaType? { headers["Content-Type"].flatMap(MediaType.init) }
}
