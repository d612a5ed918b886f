import Foundation

extension JSONWriter {
    /// Appends a parsed JSON value as compact JSON: members in their order, numbers as the
    /// source wrote them, strings escaped as ``writeString(_:to:)`` escapes them (so the text
    /// never holds a raw line break or tab). A record of `records` is one such line.
    ///
    /// Written straight from the node: going through a ``Value`` tree cost an allocation per
    /// value, a million records at a time. Not ``JSONNode/compactText``, which renders each
    /// string as a template (a `{{` in an API's data would lose a brace).
    package static func write(_ node: JSONNode, to output: inout [UInt8]) {
        switch node.value {
        case .null: append("null", to: &output)
        case .bool(let flag): append(flag ? "true" : "false", to: &output)
        case .number:
            if let text = node.numberText {
                output.append(contentsOf: text.utf8)
            } else {
                output.append(contentsOf: (node.numberSource ?? "0").utf8)
            }
        case .string(let text): writeString(text, to: &output)
        case .array(let elements):
            writeArray(elements, to: &output) { write($0, to: &$1) }
        case .object(let members):
            writeObject(members, to: &output, key: \.key) { write($0.node, to: &$1) }
        }
    }
}
