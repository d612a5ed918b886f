import Foundation

/// The containers ``FormValueEncoder`` hands out. Every primitive goes through the generic
/// `encode`, and so through one single-value container that knows the options.
struct FormKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: FormValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    mutating func encodeNil(forKey key: Key) throws {
        let child = encoder.child(key)
        child.node.content = .null
        encoder.node.set(child.node, for: encoder.name(of: key))
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let child = encoder.child(key)
        try child.encodeValue(value)
        encoder.node.set(child.node, for: encoder.name(of: key))
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws { try encode(value, at: key) }
    mutating func encode(_ value: String, forKey key: Key) throws { try encode(value, at: key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try encode(value, at: key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try encode(value, at: key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try encode(value, at: key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try encode(value, at: key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try encode(value, at: key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try encode(value, at: key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try encode(value, at: key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try encode(value, at: key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try encode(value, at: key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try encode(value, at: key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try encode(value, at: key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try encode(value, at: key) }

    private mutating func encode<T: Encodable>(_ value: T, at key: Key) throws {
        try encode(value, forKey: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let child = encoder.child(key)
        encoder.node.set(child.node, for: encoder.name(of: key))
        return child.container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = encoder.child(key)
        encoder.node.set(child.node, for: encoder.name(of: key))
        return child.unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        let child = encoder.child(FormSuperKey())
        encoder.node.set(child.node, for: "super")
        return child
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        let child = encoder.child(key)
        encoder.node.set(child.node, for: encoder.name(of: key))
        return child
    }
}

struct FormUnkeyedContainer: UnkeyedEncodingContainer {
    let encoder: FormValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }
    var count: Int { encoder.node.elements.count }

    private func next() -> FormValueEncoder {
        let child = encoder.child(FormIndexKey(intValue: count))
        encoder.node.append(child.node)
        return child
    }

    mutating func encodeNil() throws { next().node.content = .null }

    mutating func encode<T: Encodable>(_ value: T) throws { try next().encodeValue(value) }

    mutating func encode(_ value: Bool) throws { try encodeAny(value) }
    mutating func encode(_ value: String) throws { try encodeAny(value) }
    mutating func encode(_ value: Double) throws { try encodeAny(value) }
    mutating func encode(_ value: Float) throws { try encodeAny(value) }
    mutating func encode(_ value: Int) throws { try encodeAny(value) }
    mutating func encode(_ value: Int8) throws { try encodeAny(value) }
    mutating func encode(_ value: Int16) throws { try encodeAny(value) }
    mutating func encode(_ value: Int32) throws { try encodeAny(value) }
    mutating func encode(_ value: Int64) throws { try encodeAny(value) }
    mutating func encode(_ value: UInt) throws { try encodeAny(value) }
    mutating func encode(_ value: UInt8) throws { try encodeAny(value) }
    mutating func encode(_ value: UInt16) throws { try encodeAny(value) }
    mutating func encode(_ value: UInt32) throws { try encodeAny(value) }
    mutating func encode(_ value: UInt64) throws { try encodeAny(value) }

    private mutating func encodeAny<T: Encodable>(_ value: T) throws { try encode(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    {
        next().container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        next().unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { next() }
}

/// Where scalars get their text: the bool encoding, and a refusal of numbers a form cannot
/// carry back (`nan`, `inf`), as `JSONEncoder` refuses them.
struct FormSingleValueContainer: SingleValueEncodingContainer {
    let encoder: FormValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    private func set(_ text: String) { encoder.node.content = .scalar(text) }

    mutating func encodeNil() throws { encoder.node.content = .null }
    mutating func encode(_ value: Bool) throws {
        switch encoder.options.boolEncoding {
        case .literal: set(value ? "true" : "false")
        case .numeric: set(value ? "1" : "0")
        }
    }
    mutating func encode(_ value: String) throws { set(value) }
    mutating func encode(_ value: Double) throws { try setFinite(value) }
    mutating func encode(_ value: Float) throws { try setFinite(value) }
    mutating func encode(_ value: Int) throws { set(String(value)) }
    mutating func encode(_ value: Int8) throws { set(String(value)) }
    mutating func encode(_ value: Int16) throws { set(String(value)) }
    mutating func encode(_ value: Int32) throws { set(String(value)) }
    mutating func encode(_ value: Int64) throws { set(String(value)) }
    mutating func encode(_ value: UInt) throws { set(String(value)) }
    mutating func encode(_ value: UInt8) throws { set(String(value)) }
    mutating func encode(_ value: UInt16) throws { set(String(value)) }
    mutating func encode(_ value: UInt32) throws { set(String(value)) }
    mutating func encode(_ value: UInt64) throws { set(String(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws { try encoder.encodeValue(value) }

    private func setFinite<F: BinaryFloatingPoint & LosslessStringConvertible>(_ value: F) throws {
        guard value.isFinite else {
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: codingPath,
                    debugDescription: "\(value) is not a finite number, which a form cannot carry"))
        }
        set(String(value))
    }
}
