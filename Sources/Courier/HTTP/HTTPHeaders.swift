/// An ordered list of HTTP header fields with case-insensitive lookup.
///
/// Order is kept and repeated fields stay separate, as they arrived or were added:
/// ```swift
/// var headers: HTTPHeaders = ["Accept": "application/json"]
/// headers.add("Set-Cookie", "a=1")
/// headers.add("set-cookie", "b=2")
/// headers.values(for: "SET-COOKIE")  // ["a=1", "b=2"]
/// ```
public struct HTTPHeaders: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral,
    CustomStringConvertible
{
    /// One header field, with its name spelled as given.
    public struct Field: Sendable, Hashable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The fields in order.
    public private(set) var fields: [Field]

    /// Names (lowercased) a request marked secret beyond ``SecretHeaders/alwaysSecret`` (an API
    /// key in a header of the API's own name): the headers' description and `dump` redact
    /// them too. Set by ``HTTPRequest`` and ``HTTPResponse`` from their request's secrets (trial
    /// KK: `print(response.requestHeaders)` showed a `.header(name:value:)` key); not compared.
    package var markedSecret: Set<String> = []

    /// Creates headers from fields, keeping their order.
    public init(_ fields: [Field] = []) { self.fields = fields }

    /// Creates headers from name–value pairs, keeping their order.
    public init(_ pairs: [(String, String)]) {
        self.fields = pairs.map { Field(name: $0.0, value: $0.1) }
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The first value of the named field, or `nil`; the name is compared case-insensitively.
    public subscript(name: String) -> String? {
        get { fields.first { Self.same($0.name, name) }?.value }
        set {
            if let newValue { replaceOrAdd(name, newValue) } else { remove(name) }
        }
    }

    /// Every value of the named field, in order.
    public func values(for name: String) -> [String] {
        fields.filter { Self.same($0.name, name) }.map(\.value)
    }

    /// Whether a field with this name is present.
    public func contains(_ name: String) -> Bool {
        fields.contains { Self.same($0.name, name) }
    }

    /// Makes room for `capacity` fields, so that adding them does not grow the storage step
    /// by step.
    public mutating func reserveCapacity(_ capacity: Int) {
        fields.reserveCapacity(capacity)
    }

    /// Appends a field, keeping any field of the same name.
    public mutating func add(_ name: String, _ value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Appends `text` to the last field's value in place (an obsolete folded line continues
    /// the field before it); does nothing without fields. Rebuilding the list for each such
    /// line made a block of many folded lines cost time quadratic in its length.
    package mutating func appendToLastValue(_ text: String) {
        guard !fields.isEmpty else { return }
        fields[fields.count - 1].value += text
    }

    /// Replaces every field of this name with one field, kept at the first one's place.
    public mutating func replaceOrAdd(_ name: String, _ value: String) {
        guard let first = fields.firstIndex(where: { Self.same($0.name, name) }) else {
            return add(name, value)
        }
        fields[first] = Field(name: name, value: value)
        var index = fields.index(after: first)
        while index < fields.endIndex {
            if Self.same(fields[index].name, name) {
                fields.remove(at: index)
            } else {
                index = fields.index(after: index)
            }
        }
    }

    /// Removes every field with this name.
    public mutating func remove(_ name: String) {
        fields.removeAll { Self.same($0.name, name) }
    }

    /// Removes every field that carries a secret (``SecretHeaders``, and the names `marked`):
    /// what goes to another origin (a redirect, a page, a request's absolute URL elsewhere).
    mutating func removeSecrets(marked: Set<String> = []) {
        fields.removeAll { SecretHeaders.isSecret($0.name, marked: marked) }
    }

    /// Returns these headers with every field of `other` replacing same-named fields here.
    ///
    /// Used for layering: configuration headers, then request headers on top.
    public func merging(_ other: HTTPHeaders) -> HTTPHeaders {
        var merged = self
        for name in other.names { merged.remove(name) }
        merged.fields.append(contentsOf: other.fields)
        return merged
    }

    /// The distinct names, lowercased, in first-seen order.
    public var names: [String] {
        var seen = Set<String>()
        return fields.compactMap {
            let name = $0.name.lowercased()
            return seen.insert(name).inserted ? name : nil
        }
    }

    public var isEmpty: Bool { fields.isEmpty }
    public var count: Int { fields.count }

    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    /// One `Name: value` line per field; secret values (``SecretHeaders``, and the names its
    /// request marked secret) are redacted.
    public var description: String {
        SecretHeaders.redacting(self, marked: markedSecret).fields.map {
            "\($0.name): \($0.value)"
        }
        .joined(separator: "\n")
    }

    /// Equal when their fields are, whatever names are marked secret.
    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool { lhs.fields == rhs.fields }

    public func hash(into hasher: inout Hasher) { hasher.combine(fields) }

    /// Field names compare as ASCII, case-insensitively (RFC 9110 §5.1), byte by byte: no
    /// lowercased copies, and no grapheme counting, on a path every request takes.
    static func same(_ lhs: String, _ rhs: String) -> Bool {
        var left = lhs.utf8.makeIterator()
        var right = rhs.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return true
            case (let a?, let b?) where a == b || (a | 0x20 == b | 0x20 && Self.isLetter(a | 0x20)):
                continue
            default: return false
            }
        }
    }

    private static func isLetter(_ lowercased: UInt8) -> Bool {
        lowercased >= UInt8(ascii: "a") && lowercased <= UInt8(ascii: "z")
    }
}
