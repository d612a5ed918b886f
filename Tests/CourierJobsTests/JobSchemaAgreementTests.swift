import Courier
import CourierTestSupport
import Foundation
import Testing

@testable import CourierJobs

/// `jobs/schema.json` names the keys the decoder reads (``JobKeys``), refuses the others, and
/// gives them the types the decoder accepts: an editor's check and `courier validate` agree.
@Suite("Job schema agreement")
struct JobSchemaAgreementTests {
    static let schema: JSONNode = {
        let url = PackagePaths.root.appendingPathComponent("jobs/schema.json")
        let data = (try? Data(contentsOf: url)) ?? Data()
        return (try? JSONParser.parse(Array(data))) ?? JSONNode(.null)
    }()

    static var objects: [String] { JobKeys.all.map(\.name) }

    @Test("the schema names exactly the table's keys and refuses others", arguments: objects)
    func keys(name: String) throws {
        let keys = try #require(JobKeys.all.first { $0.name == name })
        let branches = try Self.objectBranches(at: keys.schema)
        #expect(!branches.isEmpty, "\(keys.schema) describes no object")
        var named = Set<String>()
        for branch in branches {
            named.formUnion(Self.member("properties", of: branch).map(Self.keys(of:)) ?? [])
            #expect(
                Self.member("additionalProperties", of: branch)?.value == .bool(false),
                "\(keys.schema): the decoder refuses unknown keys; the schema must too")
        }
        #expect(
            named.subtracting(keys.names).isEmpty,
            "\(name): the schema allows keys the decoder refuses: \(named.subtracting(keys.names).sorted())"
        )
        #expect(
            Set(keys.names).subtracting(named).isEmpty,
            "\(name): the decoder reads keys the schema lacks: \(Set(keys.names).subtracting(named).sorted())"
        )
    }

    @Test("where the schema states a key's type, it is the decoder's", arguments: objects)
    func types(name: String) throws {
        let keys = try #require(JobKeys.all.first { $0.name == name })
        let branches = try Self.objectBranches(at: keys.schema)
        for key in keys.keys {
            guard
                let property = branches.lazy.compactMap({
                    Self.member("properties", of: $0).flatMap { Self.member(key.name, of: $0) }
                }).first
            else { continue }
            let stated = try Self.types(of: Self.resolved(property))
            switch key.type {
            case .any:
                #expect(stated == nil, "\(name).\(key.name): the decoder takes any value")
            default:
                if let stated {
                    #expect(stated == Self.schemaTypes(key.type), "\(name).\(key.name)")
                }
            }
        }
    }

    /// Objects whose keys are the user's (header names, query names, a JSON body, the
    /// pointers of `records.where`, the member names of `rename` and `add`): no table.
    static let freeFormObjects: Set<String> = [
        "headers", "query", "json", "where", "rename", "add",
    ]

    @Test("every key that holds an object has its table in JobKeys.all, or is free-form")
    func everyObjectKeyHasItsTable() {
        // `tls` was once left out of `all`, so its keys went unchecked against the schema.
        let names = JobKeys.all.map(\.name)
        for object in JobKeys.all {
            for key in object.keys where key.type == .object {
                guard !Self.freeFormObjects.contains(key.name) else { continue }
                let found = names.contains {
                    $0 == key.name || $0.hasSuffix(".\(key.name)") || $0.hasSuffix(".\(key.name).*")
                }
                #expect(
                    found, "\(object.name).\(key.name) holds an object with no table in JobKeys.all"
                )
            }
        }
    }

    @Test func theTableNamesEachObjectOnce() {
        // The tests above find an object by its name: a second one of a name would go unchecked.
        #expect(Set(JobKeys.all.map(\.name)).count == JobKeys.all.count)
    }

    // MARK: - Reading the schema

    static func schemaTypes(_ type: JobKey.ValueType) -> Set<String>? {
        switch type {
        case .string: ["string"]
        case .number: ["number"]
        case .integer: ["integer"]
        case .boolean: ["boolean"]
        case .object: ["object"]
        case .array: ["array"]
        case .stringOrArray: ["string", "array"]
        case .booleanOrString: ["boolean", "string"]
        case .booleanOrArray: ["array", "boolean"]
        case .booleanOrObject: ["boolean", "object"]
        case .any: nil
        }
    }

    static func member(_ key: String, of node: JSONNode) -> JSONNode? {
        guard case .object(let members) = node.value else { return nil }
        return members.first { $0.key == key }?.node
    }

    static func keys(of node: JSONNode) -> Set<String> {
        guard case .object(let members) = node.value else { return [] }
        return Set(members.map(\.key))
    }

    struct Unresolvable: Error { var pointer: String }

    /// The node at a JSON Pointer from the schema's root, following `$ref`s on the way.
    static func node(at pointer: String) throws -> JSONNode {
        var node = schema
        for token in pointer.split(separator: "/", omittingEmptySubsequences: false).dropFirst() {
            let name = token.replacingOccurrences(of: "~1", with: "/")
                .replacingOccurrences(of: "~0", with: "~")
            node = try resolved(node)
            switch node.value {
            case .object(let members):
                guard let next = members.first(where: { $0.key == name })?.node else {
                    throw Unresolvable(pointer: pointer)
                }
                node = next
            case .array(let elements):
                guard let index = Int(name), elements.indices.contains(index) else {
                    throw Unresolvable(pointer: pointer)
                }
                node = elements[index]
            default: throw Unresolvable(pointer: pointer)
            }
        }
        return try resolved(node)
    }

    static func resolved(_ node: JSONNode) throws -> JSONNode {
        guard let ref = member("$ref", of: node), case .string(let text) = ref.value else {
            return node
        }
        return try self.node(at: String(text.dropFirst()))
    }

    /// The object schemas at `pointer`: itself, or the object branches of its `oneOf`.
    static func objectBranches(at pointer: String) throws -> [JSONNode] {
        let node = try node(at: pointer)
        guard let oneOf = member("oneOf", of: node), case .array(let branches) = oneOf.value,
            member("properties", of: node) == nil
        else { return [node] }
        return try branches.map(resolved).filter { member("properties", of: $0) != nil }
    }

    /// The JSON types a schema allows, where it says (`type`, `const`, `enum`, `oneOf`).
    static func types(of node: JSONNode) throws -> Set<String>? {
        if let type = member("type", of: node) {
            switch type.value {
            case .string(let name): return [name]
            case .array(let names):
                return Set(
                    names.compactMap { if case .string(let n) = $0.value { n } else { nil } })
            default: return nil
            }
        }
        if let constant = member("const", of: node) { return [valueType(constant)] }
        if let values = member("enum", of: node), case .array(let elements) = values.value {
            return Set(elements.map(valueType))
        }
        if let oneOf = member("oneOf", of: node), case .array(let branches) = oneOf.value {
            var union = Set<String>()
            for branch in branches {
                guard let types = try types(of: resolved(branch)) else { return nil }
                union.formUnion(types)
            }
            return union
        }
        return nil
    }

    static func valueType(_ node: JSONNode) -> String {
        switch node.value {
        case .null: "null"
        case .bool: "boolean"
        case .number(let number): number == number.rounded() ? "integer" : "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}
