/// A JSON value that remembers where it stood in its source, so that errors can name the line
/// and column. Objects keep their keys in order.
public indirect enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONNode])
    case object([(key: String, node: JSONNode)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.node == $1.node }
        default: false
        }
    }

    /// The JSON type name, for messages: "a string", "an object", …
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// A value and its position (1-based line and column of its first character).
public struct JSONNode: Sendable, Equatable {
    public var value: JSONValue
    public var line: Int
    public var column: Int
    /// A number's text as written in the source (`52.520008`, `1e400`, `-0`): what a request
    /// body sends, since a `Double` would round or overflow it.
    public var numberText: String?

    public init(_ value: JSONValue, line: Int = 0, column: Int = 0, numberText: String? = nil) {
        self.value = value
        self.line = line
        self.column = column
        self.numberText = numberText
    }

    /// A number's source text, or its shortest decimal form when built without one.
    public var numberSource: String? {
        guard case .number(let number) = value else { return nil }
        if let numberText { return numberText }
        return WholeNumberText.of(number)
    }

    public static func == (lhs: JSONNode, rhs: JSONNode) -> Bool { lhs.value == rhs.value }

}
