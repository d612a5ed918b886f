import Courier
import Foundation

/// `paginate`: one `next` rule, `stopWhen.empty`, `maxPages`.
extension TaskDecoder {
    static let nextForms =
        "one of {\"linkHeader\": \"next\"}, {\"json\": \"/next\"}, {\"header\": \"Next-Page\"}, {\"headerParam\": {\"header\": \"X-Next-Page\", \"param\": \"page\"}}, {\"cursor\": {\"json\": \"/cursor\", \"param\": \"cursor\"}}, {\"page\": {\"param\": \"page\", \"start\": 1}}, {\"offset\": {\"param\": \"offset\", \"step\": 100}}"

    /// The names of the `next` rules.
    static let nextRules = [
        "linkHeader", "json", "header", "headerParam", "cursor", "page", "offset",
    ]

    mutating func readPaginate() -> PaginationRule? {
        let node = reader.take("paginate")
        let paginate = node.flatMap {
            Self.decodePaginate($0, path: "\(path).paginate", context: context)
        }
        // A `paginate` with an error of its own still makes `{page}` a variable of the task:
        // its `save` was not wrong as well.
        paginated = node != nil
        return paginate
    }

    /// What reading `next` gave: a rule, nothing (an error was recorded), or a `cursor`,
    /// `page` or `offset` that is not an object, which ends the reading of `paginate` at once
    /// (its other keys unread; unknown ones are still reported).
    private enum NextRule {
        case rule(PaginationRule.Next)
        case invalid
        case abandoned
    }

    static func decodePaginate(_ node: JSONNode, path: String, context: DecodingContext)
        -> PaginationRule?
    {
        guard var reader = NodeReader(node, path: path, keys: JobKeys.paginate, context: context)
        else { return nil }
        defer { reader.rejectUnknownKeys() }
        guard let nextNode = reader.take("next"), case .object(let members) = nextNode.value,
            members.count == 1, let member = members.first
        else {
            context.error("\(path).next", "is required: \(nextForms)", at: node)
            reader.skipKnownKeys()
            return nil
        }
        let next: PaginationRule.Next?
        switch nextRule(member.key, member.node, path: "\(path).next", context: context) {
        case .rule(let rule): next = rule
        case .invalid: next = nil
        case .abandoned:
            reader.skipKnownKeys()
            return nil
        }
        let (stopWhenEmpty, stopWhenFalse, stopAtTotal) =
            reader.take("stopWhen").map { readStopWhen($0, path: path, context: context) }
            ?? (nil, nil, nil)
        let maxPages =
            reader.integer(
                "maxPages", range: 1...1_000_000, what: "a whole number from 1 to 1000000") ?? 1000
        let items = reader.take("items").flatMap {
            pointerValue($0, at: "\(path).items", example: "/items", context: context)
        }
        let pageSize = reader.integer(
            "pageSize", range: 1...1_000_000, what: "a whole number from 1 to 1000000")
        let requireNext = reader.bool("requireNext") ?? false
        if requireNext, pageSize == nil, stopWhenEmpty == nil {
            context.error(
                "\(path).requireNext",
                "needs pageSize (how many items a full page has) or stopWhen.empty: without either, no page looks full",
                at: node)
        }
        guard let next else { return nil }
        switch next {
        case .page, .offset, .bodyPage, .bodyOffset:
            if stopWhenEmpty == nil, stopWhenFalse == nil, stopAtTotal == nil {
                context.error(
                    "\(path).stopWhen",
                    "is required for page numbers and offsets: {\"empty\": \"/items\"} says where the page's items are, and an empty page ends ({\"false\": \"/has_more\"} and {\"total\": \"/total\"} end them too)",
                    at: node)
            }
        default: break
        }
        if stopAtTotal != nil, items == nil, stopWhenEmpty == nil {
            context.error(
                "\(path).stopWhen.total",
                "needs items (or stopWhen.empty): where each page's items are, to count them",
                at: node)
        }
        var rule = PaginationRule(
            next: next, stopWhenEmpty: stopWhenEmpty, maxPages: maxPages, items: items,
            pageSize: pageSize, requireNext: requireNext)
        rule.stopWhenFalse = stopWhenFalse
        rule.stopAtTotal = stopAtTotal
        return rule
    }

    /// `text` when it is a JSON Pointer; otherwise records an error at `place`. RFC 6901's
    /// `-` token (the element after the last, which never exists) is refused: a cursor at
    /// `/data/-/id` would end every sync after its first page.
    static func pointer(
        _ text: String?, at place: String, _ node: JSONNode, context: DecodingContext
    ) -> String? {
        guard let text, JSONPointer.isValid(text) else {
            context.error(
                place,
                "expected a JSON Pointer such as \"/next\", found \(NodeReader.describe(node))\(JSONPointer.problem(text ?? ""))",
                at: node)
            return nil
        }
        guard !JSONPointer.hasAfterLastToken(text) else {
            context.error(
                place,
                "\"\(text)\": the token - names the element after an array's last, which never exists; the last element is -1 (as in /data/-1/id)",
                at: node)
            return nil
        }
        return text
    }

    /// The one member of `next`, `path` being `….paginate.next`.
    private static func nextRule(
        _ key: String, _ node: JSONNode, path: String, context: DecodingContext
    ) -> NextRule {
        switch key {
        case "linkHeader":
            if case .string(let relation) = node.value, !relation.isEmpty {
                return .rule(.linkHeader(relation))
            }
            context.error(
                "\(path).linkHeader",
                "expected a link relation such as \"next\", found \(NodeReader.describe(node))",
                at: node)
        case "json":
            if case .string(let text) = node.value {
                return pointer(text, at: "\(path).json", node, context: context)
                    .map { .rule(.jsonURL($0)) } ?? .invalid
            }
            context.error(
                "\(path).json",
                "expected a JSON Pointer such as \"/next\", found \(NodeReader.describe(node))",
                at: node)
        case "header":
            if case .string(let name) = node.value, WireRequest.isToken(name) {
                return .rule(.headerURL(name))
            }
            context.error(
                "\(path).header",
                "expected a header field name such as \"Next-Page\", found \(NodeReader.describe(node))",
                at: node)
        case "cursor", "page", "offset", "headerParam":
            return parameterRule(key, node, path: path, context: context)
        default:
            // As a misspelt key elsewhere is (trial Z: `linkHeaders` got the whole list only).
            let guess = NodeReader.closest(to: key, in: nextRules).map {
                "did you mean \"\($0)\"? "
            }
            context.error(
                "\(path)", "unknown rule \"\(key)\": \(guess ?? "")\(nextForms)", at: node)
        }
        return .invalid
    }

    /// Pages that move in the body need a `json` body with a place at the rule's pointer
    /// (objects are made on the way; a string or number in the way, or an array too short,
    /// can never take it).
    func checkBodyPages(_ rule: PaginationRule, body: TaskSpec.Body?) {
        let field: String
        switch rule.next {
        case .bodyCursor(_, let pointer), .bodyPage(let pointer, _), .bodyOffset(let pointer, _):
            field = pointer
        default: return
        }
        guard case .json(let document)? = body else {
            context.error(
                "\(path).paginate.next",
                "writes the next page's value into the request's JSON body: the task needs a \"json\" body (and a method that sends one, such as POST)",
                at: node)
            return
        }
        if JSONPointer.setting(JSONNode(.null), at: field, in: document) == nil {
            context.error(
                "\(path).paginate.next",
                "writes the next page's value at \(field) in the json body, which has no place there (a value that is not an object is in the way)",
                at: node)
        }
    }

    /// A JSON Pointer given as a string (`nonEmpty`: not the whole document), or an error
    /// naming `example`.
    private static func pointerValue(
        _ node: JSONNode, at path: String, example: String, nonEmpty: Bool = false,
        context: DecodingContext
    ) -> String? {
        guard case .string(let text) = node.value, !(nonEmpty && text.isEmpty) else {
            context.error(
                path,
                "expected a JSON Pointer such as \"\(example)\", found \(NodeReader.describe(node))",
                at: node)
            return nil
        }
        return pointer(text, at: path, node, context: context)
    }

    /// `stopWhen`: `empty`, `false` and `total`, one or more.
    private static func readStopWhen(_ stopNode: JSONNode, path: String, context: DecodingContext)
        -> (empty: String?, false: String?, total: String?)
    {
        var stop = NodeReader(
            stopNode, path: "\(path).stopWhen", keys: JobKeys.stopWhen, context: context)
        defer { stop?.rejectUnknownKeys() }
        func read(_ key: String) -> String? {
            // The member's own node, for its message ("found an object" had named stopWhen).
            let node = Self.member(key, of: stopNode) ?? stopNode
            return stop?.string(key).flatMap {
                pointer($0, at: "\(path).stopWhen.\(key)", node, context: context)
            }
        }
        let found = (empty: read("empty"), false: read("false"), total: read("total"))
        // Said once: a member with an error of its own is not missing as well.
        let given = ["empty", "false", "total"].contains { Self.member($0, of: stopNode) != nil }
        if found.empty == nil, found.false == nil, found.total == nil, !given {
            context.error(
                "\(path).stopWhen",
                "needs one or more of {\"empty\": \"/items\"} (an empty page ends), {\"false\": \"/has_more\"} (a false flag ends), {\"total\": \"/total\"} (the items seen reach it)",
                at: stopNode)
        }
        return found
    }

    /// The node of `object`'s member `key`, if it has one.
    private static func member(_ key: String, of object: JSONNode) -> JSONNode? {
        guard case .object(let members) = object.value else { return nil }
        return members.first { $0.key == key }?.node
    }

    /// `cursor`, `page` or `offset`: rules that set a query parameter.
    private static func parameterRule(
        _ key: String, _ node: JSONNode, path: String, context: DecodingContext
    ) -> NextRule {
        let keys = [
            "cursor": JobKeys.paginateCursor, "page": JobKeys.paginatePage,
            "offset": JobKeys.paginateOffset, "headerParam": JobKeys.paginateHeaderParam,
        ][key]!
        guard var inner = NodeReader(node, path: "\(path).\(key)", keys: keys, context: context)
        else { return .abandoned }
        defer { inner.rejectUnknownKeys() }
        // `param` sends the value in the query; `body` writes it into the JSON body (a POST
        // search, a GraphQL variable). One of them, except for headerParam (a query only).
        let bodyNode = key == "headerParam" ? nil : inner.take("body")
        let field = bodyNode.flatMap {
            pointerValue(
                $0, at: "\(path).\(key).body", example: "/variables/after", nonEmpty: true,
                context: context)
        }
        // Both: said once, and the body taken, so that the rest of the rule is still read.
        if bodyNode != nil, inner.take("param") != nil {
            context.error(
                "\(path).\(key)",
                "has both param (the query) and body (the JSON body): the next page's value goes in one",
                at: node)
        }
        let parameter =
            bodyNode == nil ? inner.string("param", required: true) ?? key : ""
        switch key {
        case "cursor":
            let text = inner.string("json", required: true)
            guard let found = pointer(text, at: "\(path).cursor.json", node, context: context)
            else { return .invalid }
            if let field { return .rule(.bodyCursor(pointer: found, field: field)) }
            return bodyNode == nil ? .rule(.cursor(pointer: found, parameter: parameter)) : .invalid
        case "headerParam":
            guard let name = inner.string("header", required: true),
                WireRequest.isToken(name)
            else {
                context.error(
                    "\(path).headerParam.header",
                    "expected a header field name such as \"X-Next-Page\", found \(NodeReader.describe(node))",
                    at: node)
                return .invalid
            }
            return .rule(.headerParameter(header: name, parameter: parameter))
        case "page":
            let start =
                inner.integer("start", range: 0...1_000_000, what: "a whole number from 0") ?? 1
            if let field { return .rule(.bodyPage(field: field, start: start)) }
            return bodyNode == nil ? .rule(.page(parameter: parameter, start: start)) : .invalid
        default:
            guard
                let step = inner.integer(
                    "step", range: 1...1_000_000, what: "a whole number from 1")
            else {
                context.error("\(path).offset.step", "is required (items per page)", at: node)
                return .invalid
            }
            if let field { return .rule(.bodyOffset(field: field, step: step)) }
            return bodyNode == nil ? .rule(.offset(parameter: parameter, step: step)) : .invalid
        }
    }
}
