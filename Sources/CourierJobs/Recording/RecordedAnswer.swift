import Courier
import Foundation

/// One answer of a recording (`courier run JOB --record DIR`): the request it answered, by its
/// digest (``RequestDigest``), and the response, its body in a file of `DIR/bodies` named
/// after its SHA-256; or the transport error that came instead (a refused connection, a
/// redirect refused), which a rehearsal throws again. One JSON line of `DIR/recording.jsonl`
/// each, in the order they came.
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
    /// The error that came instead of a response (status 0, no headers, no body then).
    var error: Failure?
    /// Where the answer came from when redirects were followed to it, and how many: a
    /// rehearsal's response says so as the run's did (trial W: its log had no `finalURL`).
    var redirected: Redirected?

    /// The URL an answer came from after `hops` redirects.
    struct Redirected: Sendable, Equatable {
        var url: String
        var hops: Int
    }

    /// An attempt's error, as the log says it: its kind and its message.
    struct Failure: Sendable, Equatable {
        var kind: String
        var message: String
    }

    /// One header field.
    struct Field: Sendable, Equatable {
        var name: String
        var value: String
    }

    static let file = "recording.jsonl"
    static let bodies = "bodies"

    /// The answer's line, its newline included.
    var line: [UInt8] {
        var members: [(String, JSONWriter.Value)] = [
            ("request", .string(request)), ("method", .string(method)), ("url", .string(url)),
            ("status", .int(status)),
            ("headers", .array(headers.map { .array([.string($0.name), .string($0.value)]) })),
            ("body", .string(body)),
        ]
        if let redirected {
            members.append(("finalURL", .string(redirected.url)))
            members.append(("redirects", .int(redirected.hops)))
        }
        if let error {
            members.append(
                (
                    "error",
                    .object([("kind", .string(error.kind)), ("message", .string(error.message))])
                ))
        }
        var bytes = JSONWriter.bytes(.object(members))
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
        var error: Failure?
        if case .object(let failure)? = fields["error"] {
            let parts = Dictionary(failure.map { ($0.key, $0.node.value) }) { first, _ in first }
            guard case .string(let kind)? = parts["kind"],
                case .string(let message)? = parts["message"]
            else { return nil }
            error = Failure(kind: kind, message: message)
        }
        self.init(
            request: request, method: method, url: url, status: Int(status), headers: headers,
            body: body, error: error)
        if case .string(let final)? = fields["finalURL"],
            case .number(let hops)? = fields["redirects"]
        {
            redirected = Redirected(url: final, hops: Int(hops))
        }
    }

    init(
        request: String, method: String, url: String, status: Int, headers: [Field], body: String,
        error: Failure? = nil
    ) {
        self.request = request
        self.method = method
        self.url = url
        self.status = status
        self.headers = headers
        self.body = body
        self.error = error
    }

    /// The response's header fields, in their order.
    var headerFields: HTTPHeaders {
        HTTPHeaders(headers.map { ($0.name, $0.value) })
    }
}
