/// `DecodingError`s in words, by the path of the failing key: one wording for the API layer,
/// the form encoder and the event streams.
package enum DecodingErrorText {
    /// Describes a `DecodingError` by the path of the failing key, for example
    /// `value not found: expected String at "user.name"`.
    package static func describe(_ error: DecodingError) -> String {
        let path = keyPath
        switch error {
        case .keyNotFound(let key, let context):
            return "missing key \"\(path(context.codingPath + [key]))\""
        case .typeMismatch(let type, let context):
            return "type mismatch at \"\(path(context.codingPath))\": expected \(type)"
        case .valueNotFound(let type, let context):
            return "null value at \"\(path(context.codingPath))\": expected \(type)"
        case .dataCorrupted(let context):
            return "corrupted data at \"\(path(context.codingPath))\": \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }

    /// A coding path as `user.tags[1]`; `<root>` when empty.
    package static func keyPath(_ keys: [any CodingKey]) -> String {
        let text = keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        return text.hasPrefix(".") ? String(text.dropFirst()) : (text.isEmpty ? "<root>" : text)
    }
}
