import Foundation

/// Turns an `Encodable` into form fields: ordered query items, or an
/// `application/x-www-form-urlencoded` body.
///
/// ```swift
/// struct Search: Encodable, Sendable {
///     let text: String
///     let tags: [String]
///     let page: Int?
///     let owner: Owner            // struct Owner: Encodable { let name: String }
/// }
/// let items = try FormEncoder().queryItems(
///     from: Search(text: "a+b", tags: ["x", "y"], page: nil, owner: Owner(name: "ada")))
/// // text=a+b, tags[]=x, tags[]=y, owner[name]=ada  (page is nil, so left out)
/// ```
/// The fields come in the value's coding order (a struct's property order); a dictionary's
/// keys, whose order changes from run to run, are sorted. Nested values are named with
/// brackets (`owner[name]`), `nil` is left out, `Data` is base64 and `URL` its
/// `absoluteString`; arrays, booleans, dates and key names follow the options. The top level
/// must be keyed (a struct or a dictionary): a bare string or array has no names to give.
/// Percent-encoding is ``URLBuilder/encodeQuery(_:)``'s, so `+`, `&`, `=` and spaces in
/// values survive as data.
public struct FormEncoder: Sendable {
    /// How array elements are named, for `tags = ["a", "b"]`.
    public enum ArrayEncoding: Sendable, Hashable {
        /// `tags[]=a&tags[]=b` (Rails, PHP, Alamofire's default).
        case brackets
        /// `tags=a&tags=b` (Go's `url.Values`, Python's `parse_qs`, Spring).
        case noBrackets
        /// `tags[0]=a&tags[1]=b`; a `nil` element is left out and the others keep their index.
        case indexInBrackets
    }

    /// How booleans are written.
    public enum BoolEncoding: Sendable, Hashable {
        /// `true` and `false`.
        case literal
        /// `1` and `0`.
        case numeric
    }

    /// How dates are written; the names are `JSONEncoder.DateEncodingStrategy`'s.
    public enum DateEncoding: Sendable {
        /// ISO 8601 in UTC, `2025-01-31T12:00:00Z`, as `JSONEncoder`'s `.iso8601`.
        case iso8601
        /// Seconds since 1970, `1738324800` (fractions kept: `1738324800.5`).
        case secondsSince1970
        /// Milliseconds since 1970.
        case millisecondsSince1970
        /// With this formatter.
        case formatted(DateFormatter)
        /// With this function.
        case custom(@Sendable (Date) -> String)
    }

    /// How the keys of structs and classes are written; a dictionary's keys are data and are
    /// used as they are.
    public enum KeyEncoding: Sendable {
        /// As the type's coding keys say.
        case useDefaultKeys
        /// `createdAt` as `created_at`, `userID` as `user_id`, as `JSONEncoder`'s strategy.
        case convertToSnakeCase
        /// With this function.
        case custom(@Sendable (String) -> String)
    }

    public var arrayEncoding: ArrayEncoding
    public var boolEncoding: BoolEncoding
    public var dateEncoding: DateEncoding
    public var keyEncoding: KeyEncoding

    public init(
        arrayEncoding: ArrayEncoding = .brackets,
        boolEncoding: BoolEncoding = .literal,
        dateEncoding: DateEncoding = .iso8601,
        keyEncoding: KeyEncoding = .useDefaultKeys
    ) {
        self.arrayEncoding = arrayEncoding
        self.boolEncoding = boolEncoding
        self.dateEncoding = dateEncoding
        self.keyEncoding = keyEncoding
    }

    /// `value` as query items, in its coding order.
    /// - Throws: ``APIError`` with `.invalidRequest` for a value that is not keyed at the top
    ///   level or does not encode, naming the key path (`at "owner.scores[2]"`).
    public func queryItems(from value: some Encodable) throws(APIError) -> [URLQueryItem] {
        let root = FormNode()
        do {
            try FormValueEncoder(node: root, codingPath: [], options: self).encodeValue(value)
        } catch let error as EncodingError {
            throw APIError(.invalidRequest, Self.describe(error, of: value))
        } catch {
            throw APIError(
                .invalidRequest, "\(type(of: value)) did not encode as form fields: \(error)")
        }
        switch root.content {
        case .unset, .null:
            return []
        case .keyed:
            var items: [URLQueryItem] = []
            for (key, child) in root.orderedEntries {
                flatten(child, name: key, into: &items)
            }
            return items
        case .scalar, .unkeyed:
            throw APIError(
                .invalidRequest,
                "\(type(of: value)) cannot be form fields: the top level must be keyed "
                    + "(a struct or a dictionary) to give the fields names")
        }
    }

    /// `value` as `application/x-www-form-urlencoded` text, `name=value&…`.
    public func encode(_ value: some Encodable) throws(APIError) -> String {
        URLBuilder.encodeQuery(try queryItems(from: value))
    }

    private func flatten(_ node: FormNode, name: String, into items: inout [URLQueryItem]) {
        switch node.content {
        case .unset, .null:
            return
        case .scalar(let text):
            items.append(URLQueryItem(name: name, value: text))
        case .keyed:
            for (key, child) in node.orderedEntries {
                flatten(child, name: name + "[" + key + "]", into: &items)
            }
        case .unkeyed:
            for (index, child) in node.elements.enumerated() {
                let elementName: String
                switch arrayEncoding {
                case .brackets: elementName = name + "[]"
                case .noBrackets: elementName = name
                case .indexInBrackets: elementName = name + "[\(index)]"
                }
                flatten(child, name: elementName, into: &items)
            }
        }
    }

    private static func describe(_ error: EncodingError, of value: some Encodable) -> String {
        switch error {
        case .invalidValue(_, let context):
            return "\(type(of: value)) did not encode as form fields at "
                + "\"\(DecodingErrorText.keyPath(context.codingPath))\": \(context.debugDescription)"
        @unknown default:
            return "\(type(of: value)) did not encode as form fields: \(error)"
        }
    }
}
