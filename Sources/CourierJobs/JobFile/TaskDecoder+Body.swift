import Courier
import Foundation

/// `json`, `body` or `bodyFile`: at most one, and not on a GET or HEAD.
extension TaskDecoder {
    mutating func readBody(method: HTTPMethod) -> TaskSpec.Body? {
        var bodies: [TaskSpec.Body] = []
        if let json = reader.value("json") { bodies.append(.json(json)) }
        if let text = reader.string("body") { bodies.append(.text(text)) }
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
}
