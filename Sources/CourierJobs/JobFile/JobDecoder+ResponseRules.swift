import Courier
import Foundation

extension JobDecoder {
    /// `onResponse` (the job's, which every task without its own takes, or a task's): a
    /// non-empty array of rules, each `{"status": [...], "bodyContains": ..., "action": ...}`
    /// with a status, a body text or both.
    static func decodeResponseRules(
        _ node: JSONNode, path: String, context: DecodingContext
    ) -> [ResponseRule]? {
        guard case .array(let elements) = node.value, !elements.isEmpty else {
            context.error(
                path,
                "expected a non-empty array of rules such as {\"status\": [404], \"action\": \"ignore\"}, found \(NodeReader.describe(node))",
                at: node)
            return nil
        }
        var rules: [ResponseRule] = []
        for (index, element) in elements.enumerated() {
            if let rule = decodeResponseRule(element, path: "\(path)[\(index)]", context: context) {
                rules.append(rule)
            }
        }
        return rules.count == elements.count ? rules : nil
    }

    private static func decodeResponseRule(
        _ node: JSONNode, path: String, context: DecodingContext
    ) -> ResponseRule? {
        guard
            var reader = NodeReader(node, path: path, keys: JobKeys.responseRule, context: context)
        else { return nil }
        let statusNode = reader.take("status")
        let statuses = statusNode.flatMap {
            statusSet($0, path: "\(path).status", context: context)
        }
        if let statusNode, case .array(let given) = statusNode.value, given.isEmpty {
            context.error(
                "\(path).status", "expected at least one status (leave it out for any)",
                at: statusNode)
        }
        let containsNode = reader.take("bodyContains")
        let contains = containsNode.flatMap {
            texts($0, path: "\(path).bodyContains", context: context)
        }
        let actions = ResponseRule.Action.allCases.map { "\"\($0.rawValue)\"" }.joined(
            separator: ", ")
        let actionNode = reader.take("action")
        var action: ResponseRule.Action?
        if let actionNode {
            if case .string(let word) = actionNode.value,
                let known = ResponseRule.Action(rawValue: word)
            {
                action = known
            } else {
                context.error(
                    "\(path).action",
                    "expected one of \(actions), found \(NodeReader.describe(actionNode))",
                    at: actionNode)
            }
        } else {
            context.error(path, "needs \"action\": one of \(actions)", at: node)
        }
        reader.rejectUnknownKeys()
        if statusNode == nil, containsNode == nil {
            context.error(
                path,
                "needs \"status\", \"bodyContains\" or both: a rule that matches every response would take the place of the task's expectations",
                at: node)
            return nil
        }
        guard let action else { return nil }
        return ResponseRule(
            statuses: statuses, bodyContains: contains ?? [], action: action, path: path)
    }

    /// A string or a non-empty array of non-empty strings.
    private static func texts(_ node: JSONNode, path: String, context: DecodingContext)
        -> [String]?
    {
        var found: [String] = []
        switch node.value {
        case .string(let text): found = [text]
        case .array(let elements):
            for element in elements {
                guard case .string(let text) = element.value else { found = []; break }
                found.append(text)
            }
            if found.count != elements.count { found = [] }
        default: break
        }
        guard !found.isEmpty, !found.contains(where: \.isEmpty) else {
            context.error(
                path,
                "expected a text or an array of texts, none empty, found \(NodeReader.describe(node))",
                at: node)
            return nil
        }
        return found
    }
}
