import Courier
import Foundation

/// Reads one JSON object of a job file strictly: typed getters that record an error (with the
/// JSON path and position) instead of throwing, and a final check that no unknown key is left.
/// Which keys it knows, and whether each resolves `${env:…}` as a template, come from its
/// ``JobObjectKeys`` (``JobKeys``).
struct NodeReader {
    let node: JSONNode
    let path: String
    let keys: JobObjectKeys
    let context: DecodingContext
    private var members: [(key: String, node: JSONNode)] = []
    private var used = Set<String>()

    /// Returns nil (and records an error) when `node` is not an object.
    init?(_ node: JSONNode, path: String, keys: JobObjectKeys, context: DecodingContext) {
        self.node = node
        self.path = path
        self.keys = keys
        self.context = context
        guard case .object(let members) = node.value else {
            context.error(path, "expected an object, found \(node.value.typeName)", at: node)
            return nil
        }
        self.members = members
    }

    func childPath(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    mutating func take(_ key: String) -> JSONNode? {
        assert(keys.contains(key), "\"\(key)\" is not a key of \(keys.name) in JobKeys")
        used.insert(key)
        return members.first { $0.key == key }?.node
    }

    /// Records an error for the key, at its position.
    func fail(_ key: String, _ message: String, at node: JSONNode) {
        context.error(childPath(key), message, at: node)
    }

    /// A string, with `${env:…}` resolved where the key allows it; in a templated key, `{…}` in
    /// an environment value stays text (``Template/environmentBrace``).
    mutating func string(_ key: String, required: Bool = false) -> String? {
        guard let value = take(key) else {
            if required { context.error(childPath(key), "is required (a string)", at: node) }
            return nil
        }
        guard case .string(let text) = value.value else {
            fail(key, "expected a string, found \(value.value.typeName)", at: value)
            return nil
        }
        return resolved(text, key: keys[key], path: childPath(key), at: value)
    }

    /// Any JSON value, with `${env:…}` resolved in every string where the key allows it.
    mutating func value(_ key: String) -> JSONNode? {
        guard let value = take(key) else { return nil }
        let spec = keys[key]
        guard spec.env else { return value }
        return context.resolveEnvironment(in: value, path: childPath(key), template: spec.templated)
    }

    private func resolved(_ text: String, key: JobKey, path: String, at node: JSONNode) -> String {
        key.env
            ? context.resolveEnvironment(
                text, path: path, at: node, template: key.templated, inPath: key.urlPath,
                inURL: key.wholeURL)
            : text
    }

    /// A string key whose value must be one of an enum's raw values.
    mutating func choice<Value: RawRepresentable & CaseIterable>(
        _ key: String, of type: Value.Type
    ) -> Value? where Value.RawValue == String {
        guard let node = take(key), let text = string(key) else { return nil }
        if let value = Value(rawValue: text) { return value }
        let allowed = Value.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: " or ")
        fail(key, "expected \(allowed), found \"\(text)\"", at: node)
        return nil
    }

    mutating func number(_ key: String, range: ClosedRange<Double>, what: String) -> Double? {
        guard let value = take(key) else { return nil }
        guard case .number(let number) = value.value, range.contains(number) else {
            // Over the bound, say the bound: "greater than 0" read wrong for 1e400.
            var bound = ""
            if case .number(let number) = value.value, !(number <= range.upperBound) {
                let upper = range.upperBound
                bound = ", at most \(upper == upper.rounded() ? String(Int(upper)) : String(upper))"
            }
            fail(key, "expected \(what)\(bound), found \(describe(value))", at: value)
            return nil
        }
        return number
    }

    mutating func integer(_ key: String, range: ClosedRange<Int>, what: String) -> Int? {
        guard let value = take(key) else { return nil }
        guard case .number(let number) = value.value, number == number.rounded(),
            let integer = Int(exactly: number), range.contains(integer)
        else {
            fail(key, "expected \(what), found \(describe(value))", at: value)
            return nil
        }
        return integer
    }

    mutating func bool(_ key: String) -> Bool? {
        guard let value = take(key) else { return nil }
        guard case .bool(let flag) = value.value else {
            fail(key, "expected true or false, found \(describe(value))", at: value)
            return nil
        }
        return flag
    }

    /// Whether the object has `key`, taken or not, valid or not.
    func has(_ key: String) -> Bool { members.contains { $0.key == key } }

    /// An object of string values, in order.
    /// The value nodes of the object at `key`, by member name, without taking it: where an
    /// error about one value points (its line and column, not its task's).
    func memberNodes(of key: String) -> [String: JSONNode] {
        guard let object = members.first(where: { $0.key == key })?.node,
            case .object(let inner) = object.value
        else { return [:] }
        return Dictionary(inner.map { ($0.key, $0.node) }, uniquingKeysWith: { first, _ in first })
    }

    mutating func stringMap(_ key: String) -> [(
        name: String, value: String
    )]? {
        guard let value = take(key) else { return nil }
        guard case .object(let members) = value.value else {
            fail(key, "expected an object of strings, found \(value.value.typeName)", at: value)
            return nil
        }
        var result: [(name: String, value: String)] = []
        for member in members {
            let memberPath = "\(childPath(key)).\(member.key)"
            guard case .string(let text) = member.node.value else {
                context.error(
                    memberPath, "expected a string, found \(member.node.value.typeName)",
                    at: member.node)
                continue
            }
            result.append(
                (member.key, resolved(text, key: keys[key], path: memberPath, at: member.node)))
        }
        return result
    }

    /// Takes every known key left, unread: an object whose reading stopped at a bad key has
    /// its other known keys reported as nothing (trial HH: "unknown key \"maxPages\"; did you
    /// mean \"maxPages\"?").
    mutating func skipKnownKeys() {
        used.formUnion(keys.names)
    }

    /// Records an error for every key nobody took, suggesting the closest known one.
    func rejectUnknownKeys() {
        let known = keys.names
        for member in members where !used.contains(member.key) {
            var message = "unknown key \"\(member.key)\""
            if let suggestion = Self.closest(to: member.key, in: known) {
                message += "; did you mean \"\(suggestion)\"?"
            } else {
                message += "; expected one of \(known.map { "\"\($0)\"" }.joined(separator: ", "))"
            }
            context.error(childPath(member.key), message, at: member.node)
        }
    }

    func describe(_ node: JSONNode) -> String { Self.describe(node) }

    /// A value for a message: a number or string as written, else its type.
    static func describe(_ node: JSONNode) -> String {
        switch node.value {
        case .number: node.numberSource ?? "a number"
        case .string(let text): "\"\(text)\""
        case .array(let elements) where elements.isEmpty: "an empty array"
        case .object(let members) where members.isEmpty: "an empty object"
        default: node.value.typeName
        }
    }

    /// The known key within edit distance 2, if any.
    static func closest(to key: String, in known: [String]) -> String? {
        known.map { ($0, distance(key.lowercased(), $0.lowercased())) }
            .filter { $0.1 <= 2 }.min { $0.1 < $1.1 }?.0
    }

    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        var previous = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...max(b.count, 1) where !b.isEmpty {
                current[j] = min(
                    previous[j] + 1, current[j - 1] + 1,
                    previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
