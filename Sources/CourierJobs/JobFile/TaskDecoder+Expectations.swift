import Courier
import Foundation

/// `expect`: `status`, `json`, `headers`, `bodyContains` and `maxMs`.
extension TaskDecoder {
    mutating func readExpect() -> (status: Set<Int>?, expectation: Expectation) {
        guard let expectNode = reader.take("expect"),
            var expect = NodeReader(
                expectNode, path: "\(path).expect", keys: JobKeys.expect, context: context)
        else { return (nil, Expectation()) }
        var status: Set<Int>?
        if let statuses = expect.take("status") {
            status = JobDecoder.statusSet(statuses, path: "\(path).expect.status", context: context)
            if status?.isEmpty == true, case .array(let elements) = statuses.value,
                elements.isEmpty
            {
                // No status would do: every attempt would fail, its reason blank (trial FFF).
                context.error(
                    "\(path).expect.status",
                    "expected at least one HTTP status (leave \"status\" out for any 2xx)",
                    at: statuses)
            }
        }
        var expectation = Self.decodeExpectation(
            &expect, path: "\(path).expect", context: context)
        expect.rejectUnknownKeys()
        // The task's `{variables}` in expected values: checked as every template is, and
        // rendered per task (``Expectation/rendered(_:)``) only when there are some.
        for text in expectation.templateTexts {
            checkVariables(text, key: "expect", at: expectNode)
            if !Template(text).variables.isEmpty { expectation.isTemplated = true }
        }
        return (status, expectation)
    }

    /// `expect.json`, `expect.headers`, `expect.bodyContains` and `expect.maxMs`.
    static func decodeExpectation(
        _ expect: inout NodeReader, path: String, context: DecodingContext
    ) -> Expectation {
        var expectation = Expectation()
        if let json = expect.take("json") {
            expectation.json = expectedJSON(json, in: expect, path: path, context: context)
        }
        if let headers = expect.stringMap("headers") {
            for header in headers where !WireRequest.isToken(header.name) {
                context.error(
                    "\(path).headers", "\"\(header.name)\" is not a header name", at: expect.node)
            }
            expectation.headers = headers.map { ($0.name, $0.value) }
        }
        if let contains = expect.take("bodyContains") {
            expectation.bodyContains = bodyContains(contains, in: expect) ?? []
        }
        expectation.maxMs = expect.number(
            "maxMs", range: 0.001...86_400_000, what: "milliseconds greater than 0")
        return expectation
    }

    /// `expect.json`: JSON Pointer → the exact value there.
    private static func expectedJSON(
        _ json: JSONNode, in expect: NodeReader, path: String, context: DecodingContext
    ) -> [(pointer: String, value: JSONNode)] {
        guard case .object(let members) = json.value else {
            expect.fail(
                "json",
                "expected an object of JSON Pointer to value, like {\"/status\": \"done\"}, found \(json.value.typeName)",
                at: json)
            return []
        }
        var pairs: [(pointer: String, value: JSONNode)] = []
        for member in members {
            if JSONPointer.isValid(member.key) {
                pairs.append((member.key, member.node))
            } else {
                context.error(
                    "\(path).json",
                    "\"\(member.key)\" is not a JSON Pointer (expected \"\" or a path starting with /, like \"/status\")",
                    at: member.node)
            }
        }
        return pairs
    }

    /// `expect.bodyContains`: a string or an array of strings.
    private static func bodyContains(_ contains: JSONNode, in expect: NodeReader) -> [String]? {
        switch contains.value {
        case .string(let text):
            return [text]
        case .array(let elements)
        where elements.allSatisfy({ if case .string = $0.value { true } else { false } }):
            return elements.compactMap {
                if case .string(let text) = $0.value { text } else { nil }
            }
        default:
            expect.fail(
                "bodyContains",
                "expected a string or an array of strings, found \(contains.value.typeName)",
                at: contains)
            return nil
        }
    }
}
