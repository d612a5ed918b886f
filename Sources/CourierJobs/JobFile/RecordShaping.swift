import Courier
import Foundation

/// How `records` shapes each record before it is written: which records it keeps (`where`),
/// which members (`select`, `drop`), under which names (`rename`), and what it adds from the
/// task's variables and captures (`add`: the parent's id on a child's records). Without any,
/// each record is copied byte for byte, as before.
///
/// Members are named at the record's top level; `where` takes JSON Pointers into it. The steps
/// run in the order of the keys above, each on what the one before left.
struct RecordShaping: Sendable, Equatable {
    /// Pointer → the value the record must have there (numbers compare by value).
    var conditions: [(pointer: String, value: JSONNode)] = []
    /// The members to keep, in this order; `nil` keeps every member.
    var select: [String]?
    var drop: [String] = []
    var rename: [(from: String, to: String)] = []
    /// Member name → template (`{variables}` and captures), rendered per task.
    var add: [(name: String, template: String)] = []

    var isEmpty: Bool {
        conditions.isEmpty && select == nil && drop.isEmpty && rename.isEmpty && add.isEmpty
    }

    /// Whether a record's members change (not only which records are kept).
    var reshapes: Bool { select != nil || !drop.isEmpty || !rename.isEmpty || !add.isEmpty }

    static func == (lhs: RecordShaping, rhs: RecordShaping) -> Bool { lhs.text == rhs.text }

    /// The shaping in words, for the part's settings (a part written under other shaping
    /// is not used) and messages.
    var text: String {
        guard !isEmpty else { return "" }
        var parts: [String] = []
        if !conditions.isEmpty {
            parts.append(
                "where "
                    + conditions.map { "\($0.pointer)=\($0.value.compactText)" }.joined(
                        separator: ","))
        }
        if let select { parts.append("select " + select.joined(separator: ",")) }
        if !drop.isEmpty { parts.append("drop " + drop.joined(separator: ",")) }
        if !rename.isEmpty {
            parts.append("rename " + rename.map { "\($0.from)>\($0.to)" }.joined(separator: ","))
        }
        if !add.isEmpty {
            parts.append("add " + add.map { "\($0.name)=\($0.template)" }.joined(separator: ","))
        }
        return parts.joined(separator: " ")
    }

    /// Whether `record` meets every `where` condition.
    func keeps(_ record: JSONNode) -> Bool {
        conditions.allSatisfy { condition in
            JSONPointer.resolve(condition.pointer, in: record)?.value == condition.value.value
        }
    }

    /// The `add` members for one task: each template rendered with its `bindings`. A value
    /// that is one whole `{variable}` and reads as a JSON number, `true`, `false` or `null` is
    /// written as that value (an id captured from a parent stays a number); any other is text.
    func added(_ bindings: [String: String]) -> [(name: String, node: JSONNode)] {
        add.map { name, template in
            let rendered = Template(template).render(bindings)
            let whole =
                Template(template).variables.count == 1 && template.hasPrefix("{")
                && template.hasSuffix("}") && !template.dropFirst().dropLast().contains("{")
            if whole, let literal = try? JSONParser.parse(Array(rendered.utf8)),
                Self.isScalar(literal), rendered == literal.compactText
            {
                return (name, literal)
            }
            return (name, JSONNode(.string(rendered)))
        }
    }

    private static func isScalar(_ node: JSONNode) -> Bool {
        switch node.value {
        case .number, .bool, .null: true
        default: false
        }
    }
}
