import Courier
import Foundation

/// `json`, `body` or `bodyFile`: at most one, and not on a GET or HEAD.
extension TaskDecoder {
    mutating func readBody(method: HTTPMethod) -> TaskSpec.Body? {
        var bodies: [TaskSpec.Body] = []
        if let json = reader.value("json") {
            noteBodyUses(in: json, key: "json")
            bodies.append(.json(json))
        }
        if let text = reader.string("body") {
            noteBodyUses(of: text, key: "body", at: node)
            bodies.append(.text(text))
        }
        if let fileNode = reader.take("bodyFile"), let name = reader.string("bodyFile") {
            let url = URL(fileURLWithPath: name, relativeTo: defaults.jobFolder)
            if let problem = FileSystem.notRegularFile(url) {
                reader.fail("bodyFile", "\"\(name)\": \(problem)", at: fileNode)
            }
            bodies.append(.file(url))
        }
        if bodies.count > 1 {
            context.error(
                path, "has more than one of \"json\", \"body\" and \"bodyFile\"; give one", at: node
            )
        }
        if !bodies.isEmpty, method == .get || method == .head {
            // Both transports refuse one (WireRequest): say so before the run, not per task.
            context.error(
                path,
                "has a body but its method is \(method) (GET is the default): a \(method) request "
                    + "cannot carry a body; set \"method\" (POST, PUT, PATCH…)",
                at: node)
        }
        return bodies.first
    }

    /// Records the `{names}` of a body's strings that are not the task's variables: those a
    /// task captures are the task's inputs (it waits for them, and takes their values); any
    /// other stays text, since a body may hold braces of its own (``CaptureLinker``). Before,
    /// a capture used only in a body was sent as `{name}`, before its task had run.
    private mutating func noteBodyUses(in node: JSONNode, key: String) {
        switch node.value {
        case .string(let text): noteBodyUses(of: text, key: key, at: node)
        case .array(let elements): for element in elements { noteBodyUses(in: element, key: key) }
        case .object(let members): for member in members { noteBodyUses(in: member.node, key: key) }
        default: break
        }
    }

    private mutating func noteBodyUses(of text: String, key: String, at node: JSONNode) {
        guard text.contains("{") else { return }
        for name in Template(text).variables where !variables.contains(name) {
            unresolved.append((name, key, node))
        }
    }
}
