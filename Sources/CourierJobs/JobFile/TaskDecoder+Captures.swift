import Courier
import Foundation

/// `capture`: values this task's responses hand to other tasks.
extension TaskDecoder {
    mutating func readCaptures(save: String?, conditional: Bool) -> [CaptureRule] {
        let captureNode = reader.take("capture")
        let captures =
            captureNode.map { Self.decodeCaptures($0, path: "\(path).capture", context: context) }
            ?? []
        if conditional, !captures.isEmpty, let captureNode {
            reader.fail(
                "capture", "cannot be combined with conditional: a 304 has no body to capture from",
                at: captureNode)
        }
        if save != nil, captures.contains(where: \.secret), let captureNode {
            reader.fail(
                "capture",
                "a secret capture's task may not save its body: the secret would be written to disk",
                at: captureNode)
        }
        return captures
    }

    /// `capture`: name → `{"json": "/pointer"}` or `{"header": "Name"}`, with `"secret": true`
    /// optional.
    static func decodeCaptures(_ node: JSONNode, path: String, context: DecodingContext)
        -> [CaptureRule]
    {
        guard case .object(let members) = node.value, !members.isEmpty else {
            context.error(
                path,
                "expected an object of captures (name → {\"json\": \"/pointer\"} or {\"header\": \"Name\"}), found \(node.value.typeName)",
                at: node)
            return []
        }
        return members.compactMap {
            captureRule(named: $0.key, $0.node, path: "\(path).\($0.key)", context: context)
        }
    }

    private static func captureRule(
        named name: String, _ node: JSONNode, path: String, context: DecodingContext
    ) -> CaptureRule? {
        guard Template.isIdentifier(Array(name.utf8)[...]) else {
            context.error(
                path, "capture names are letters, digits and '_', not starting with a digit",
                at: node)
            return nil
        }
        guard var reader = NodeReader(node, path: path, keys: JobKeys.capture, context: context)
        else { return nil }
        defer { reader.rejectUnknownKeys() }
        let secret = reader.bool("secret") ?? false
        let jsonNode = reader.take("json")
        let headerNode = reader.take("header")
        switch (reader.string("json"), reader.string("header")) {
        case (let pointer?, nil):
            guard JSONPointer.isValid(pointer) else {
                reader.fail(
                    "json",
                    "expected a JSON Pointer such as \"/items/*/id\", found \"\(pointer)\"\(JSONPointer.problem(pointer))",
                    at: jsonNode!)
                return nil
            }
            return CaptureRule(name: name, source: .json(pointer), secret: secret)
        case (nil, let header?):
            guard HTTPMethod(header).isValidToken else {
                reader.fail("header", "\"\(header)\" is not a valid header name", at: headerNode!)
                return nil
            }
            return CaptureRule(name: name, source: .header(header), secret: secret)
        default:
            context.error(
                path, "expected exactly one of \"json\" (a JSON Pointer) or \"header\"", at: node)
            return nil
        }
    }
}
