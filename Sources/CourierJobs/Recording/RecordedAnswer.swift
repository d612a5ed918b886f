import Courier
import Foundation

/// One answer of a recording (`courier run JOB --record DIR`): the request it answered, by its
/// digest (``RequestDigest``), and the response, its body in a file of `DIR/bodies` named
/// after its SHA-256. One JSON line of `DIR/recording.jsonl` each, in the order they came.
struct RecordedAnswer: Sendable, Equatable {
    /// The request's digest: what a rehearsal looks the answer up by.
    var request: String
    /// For messages: the request's method and URL (display form).
    var method: String
    var url: String
    var status: Int
    /// The response's header fields in their order, repeats kept, secret ones as `<redacted>`.
    var headers: [Field]
    /// The body's SHA-256, its file's name in `bodies/`.
    var body: String

    /// One header field.
    struct Field: Sendable, Equatable {
        var name: String
        var value: String
    }

    static let file = "recording.jsonl"
    static let bodies = "bodies"

    /// The answer's line, its newline included.
    var line: [UInt8] {
        var bytes = JSONWriter.bytes(
            .object([
                ("request", .string(request)), ("method", .string(method)), ("url", .string(url)),
                ("status", .int(status)),
                ("headers", .array(headers.map { .array([.string($0.name), .string($0.value)]) })),
                ("body", .string(body)),
            ]))
        bytes.append(0x0A)
        return bytes
    }

    /// The answer a line holds, or `nil` when it is not one (a cut last line).
    init?(line: ArraySlice<UInt8>) {
        guard let node = try? JSONParser.parse(Array(line)),
            case .object(let members) = node.value
        else { return nil }
        var fields: [String: JSONValue] = [:]
        for member in members { fields[member.key] = member.node.value }
        guard case .string(let request)? = fields["request"],
            case .string(let method)? = fields["method"], case .string(let url)? = fields["url"],
            case .number(let status)? = fields["status"], case .string(let body)? = fields["body"],
            case .array(let pairs)? = fields["headers"]
        else { return nil }
        var headers: [Field] = []
        for pair in pairs {
            guard case .array(let parts) = pair.value, parts.count == 2,
                case .string(let name) = parts[0].value, case .string(let value) = parts[1].value
            else { return nil }
            headers.append(Field(name: name, value: value))
        }
        self.init(
            request: request, method: method, url: url, status: Int(status), headers: headers,
            body: body)
    }

    init(
        request: String, method: String, url: String, status: Int, headers: [Field], body: String
    ) {
        self.request = request
        self.method = method
        self.url = url
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The response's header fields, in their order.
    var headerFields: HTTPHeaders {
        HTTPHeaders(headers.map { ($0.name, $0.value) })
    }
}
