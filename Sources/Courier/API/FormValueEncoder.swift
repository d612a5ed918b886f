import Foundation

/// What ``FormEncoder`` builds before naming the fields: a tree of keyed, unkeyed and scalar
/// values. A class, since the containers an `Encoder` hands out write into it after they
/// were returned.
final class FormNode {
    enum Content {
        case unset, null, keyed, unkeyed
        case scalar(String)
    }

    var content = Content.unset
    private(set) var entries: [(key: String, node: FormNode)] = []
    private(set) var elements: [FormNode] = []
    /// Where each key is in `entries`: a key encoded twice replaces the first in its place.
    private var positions: [String: Int] = [:]
    /// Set for dictionaries, whose own order changes from run to run.
    var sortsKeys = false

    var orderedEntries: [(key: String, node: FormNode)] {
        sortsKeys ? entries.sorted { $0.key < $1.key } : entries
    }

    func set(_ node: FormNode, for key: String) {
        content = .keyed
        if let position = positions[key] {
            entries[position].node = node
        } else {
            positions[key] = entries.count
            entries.append((key, node))
        }
    }

    func append(_ node: FormNode) {
        content = .unkeyed
        elements.append(node)
    }
}

/// Marks dictionaries, whose keys ``FormEncoder`` sorts and leaves unconverted.
private protocol FormDictionary {}
extension Dictionary: FormDictionary {}

/// The `Encoder` behind ``FormEncoder``, writing one value into one ``FormNode``.
struct FormValueEncoder: Encoder {
    let node: FormNode
    let codingPath: [any CodingKey]
    let options: FormEncoder
    /// False inside a dictionary: its keys are data, not names to convert.
    var convertsKeys = true
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// Encodes `value` here, taking the types with a form of their own before their
    /// `Encodable` conformance would (a `Date` would encode as a number, `Data` as an array).
    func encodeValue<T: Encodable>(_ value: T) throws {
        switch value {
        case let date as Date: node.content = .scalar(string(from: date))
        case let data as Data: node.content = .scalar(data.base64EncodedString())
        case let url as URL: node.content = .scalar(url.absoluteString)
        case let decimal as Decimal: node.content = .scalar(decimal.description)
        default:
            var encoder = self
            if value is any FormDictionary {
                node.sortsKeys = true
                encoder.convertsKeys = false
            }
            try value.encode(to: encoder)
        }
    }

    /// A new node for the value at `key`, below this one.
    func child(_ key: any CodingKey) -> FormValueEncoder {
        FormValueEncoder(node: FormNode(), codingPath: codingPath + [key], options: options)
    }

    func name(of key: some CodingKey) -> String {
        guard convertsKeys else { return key.stringValue }
        switch options.keyEncoding {
        case .useDefaultKeys: return key.stringValue
        case .convertToSnakeCase: return SnakeCase.convert(key.stringValue)
        case .custom(let convert): return convert(key.stringValue)
        }
    }

    private func string(from date: Date) -> String {
        switch options.dateEncoding {
        case .iso8601: date.ISO8601Format()
        case .secondsSince1970: number(date.timeIntervalSince1970)
        case .millisecondsSince1970: number(date.timeIntervalSince1970 * 1000)
        case .formatted(let formatter): formatter.string(from: date)
        case .custom(let format): format(date)
        }
    }

    /// Whole numbers without `.0`, as `JSONEncoder` writes them.
    private func number(_ value: Double) -> String {
        WholeNumberText.of(value)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .keyed = node.content {} else { node.content = .keyed }
        return KeyedEncodingContainer(FormKeyedContainer<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .unkeyed = node.content {} else { node.content = .unkeyed }
        return FormUnkeyedContainer(encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        FormSingleValueContainer(encoder: self)
    }
}

/// An array index as a coding key, so error paths read `tags[1]`.
struct FormIndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "\(intValue ?? 0)" }
    init(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}

/// The key `super` names, for classes that encode their superclass apart.
struct FormSuperKey: CodingKey {
    var stringValue: String { "super" }
    var intValue: Int? { nil }
    init() {}
    init?(stringValue: String) { nil }
    init?(intValue: Int) { nil }
}
