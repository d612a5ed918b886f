import Courier
import Foundation

/// A job file from a recorded HAR (`courier import --har`): one task per entry, its method,
/// URL (a shared origin becomes the job's `baseURL`), query, headers and body, with every
/// secret-looking value replaced by an `${env:NAME}` reference the user fills in.
///
/// Given a base URL (`--base-url`), the job's `baseURL` is that one and every entry on the
/// recorded base (the shared origin, or the one most entries have) becomes a `path` joined to
/// it; the rest keep their URLs. Only URLs change: headers and bodies are copied as recorded.
///
/// What is copied is text the job file's templates would otherwise read (`{name}`), so braces
/// are escaped (``Template``'s `{{` and `}}`) and the job sends the recorded bytes.
struct HARImport {
    /// Why a HAR could not be read.
    struct Failure: Error {
        var message: String
    }

    /// An environment variable the job reads, and what it stands for.
    struct Variable: Equatable {
        var name: String
        var source: String
    }

    /// The job file's text.
    private(set) var jobText = ""
    /// The variables to set before running it, in first use order.
    private(set) var variables: [Variable] = []
    /// What could not be carried over (said on stderr).
    private(set) var warnings: [String] = []

    private var secretValues: [String: String] = [:]  // "header\nvalue" -> variable name
    /// The `${env:…}` references written for secrets.
    private var references = 0
    /// How many requests each variable of a redacted value stands for.
    private var redactedUses: [String: Int] = [:]

    /// Header fields a client sets itself or that belong to one connection (RFC 9110 7.6.1),
    /// left out. `Accept-Encoding` is the transport's to choose: it decodes only what it asked
    /// for. Trace context is the recorded run's span: a job sending it again would claim that
    /// span for every request (trial BB); `"trace": true` makes a span of each one's own.
    static let droppedHeaders: Set<String> = [
        "host", "content-length", "connection", "keep-alive", "proxy-connection", "te",
        "trailer", "transfer-encoding", "upgrade", "accept-encoding", "traceparent",
        "tracestate",
    ]

    /// Whether the recorded request carried an `Idempotency-Key`.
    private static func keyed(_ request: JSONNode) -> Bool {
        guard case .array(let list)? = request.member("headers")?.value else { return false }
        return list.contains { $0.member("name")?.string?.lowercased() == "idempotency-key" }
    }

    /// Whether a header's or query parameter's value is a secret: the names the log redacts,
    /// and any name with token, secret, key, password or auth in it.
    static func isSecret(name: String) -> Bool {
        let lower = name.lowercased()
        if SecretHeaders.isSecret(name) || lower == "cookie" { return true }
        // A key that names the request, not a credential.
        if lower == "idempotency-key" { return false }
        return ["token", "secret", "key", "password", "passwd", "auth", "session", "signature"]
            .contains { lower.contains($0) }
    }

    /// - Parameter baseURL: the job's `baseURL` instead of the recorded one, already checked
    ///   (``baseURLProblem(_:)``).
    init(har bytes: [UInt8], name: String, baseURL: String? = nil) throws(Failure) {
        let root: JSONNode
        do {
            root = try JSONParser.parse(bytes)
        } catch {
            throw Failure(
                message:
                    "not JSON (line \(error.line), column \(error.column): \(error.message)); a HAR file is one JSON object"
            )
        }
        guard let log = root.member("log"), case .array(let entries)? = log.member("entries")?.value
        else { throw Failure(message: "not a HAR file: no log.entries array") }
        var requests: [(method: String, url: URLComponents, node: JSONNode, index: Int)] = []
        for (index, entry) in entries.enumerated() {
            guard let request = entry.member("request"),
                case .string(let urlText)? = request.member("url")?.value,
                Origin.httpURL(urlText) != nil,
                // The log's placeholder, left as it was in a URL otherwise encoded: as it is,
                // Foundation encodes the whole URL again (trial UUU: `%7B` became `%257B`).
                let url = URLComponents(
                    string: urlText.replacingOccurrences(of: "<redacted>", with: "%3Credacted%3E"))
            else {
                let url = entry.member("request")?.member("url")?.string ?? ""
                throw Failure(
                    message: url.contains("redacted")
                        ? "log.entries[\(index)].request.url: its origin was a secret, redacted in the log (\(url)); give the job a baseURL by hand"
                        : "log.entries[\(index)].request: no http or https url")
            }
            let method = request.member("method")?.string?.uppercased() ?? "GET"
            requests.append((method, url, request, index))
        }
        guard !requests.isEmpty else { throw Failure(message: "the HAR has no entries") }
        let origins = requests.map { Self.origin($0.url) }
        let distinct = Set(origins)
        // The origin whose entries become paths under the job's baseURL.
        var recordedBase = distinct.count == 1 ? origins.first : nil
        if let baseURL, recordedBase == nil {
            recordedBase = Self.mostFrequent(origins)
            let moved = origins.filter { $0 == recordedBase }.count
            warnings.append(
                "the recording has requests to \(distinct.count) origins: \(moved) of \(origins.count) went to \(recordedBase ?? ""), the most, and now go to \(baseURL); the rest keep their URLs"
            )
        }

        var ids: Set<String> = []
        var tasks: [JSONWriter.Value] = []
        for (method, url, request, index) in requests {
            var id = "request-\(index + 1)"
            if let task = entries[index].member("_courier")?.member("task")?.string {
                id = task
            }
            if ids.contains(id) { id += "-\(index + 1)" }
            ids.insert(id)
            tasks.append(
                task(
                    id: id, method: method, url: url, request: request, index: index,
                    relative: Self.origin(url) == recordedBase))
        }
        var job: [(String, JSONWriter.Value)] = [
            ("version", .int(1)), ("name", .string(name)),
        ]
        if let base = baseURL ?? recordedBase { job.append(("baseURL", .string(base))) }
        jobText = Self.render(job, tasks: tasks)
        // A log redacts every credential alike: one variable may stand for several.
        for (variable, uses) in redactedUses.sorted(by: { $0.key < $1.key }) where uses > 1 {
            warnings.append(
                "${env:\(variable)} stands for the redacted value of \(uses) requests: if they sent different credentials, give each its own variable"
            )
        }
        // A recorded `${…}` would be read as a reference: there is no escape for it.
        if jobText.components(separatedBy: "${").count - 1 > references {
            warnings.append(
                "a recorded value holds ${…}, which the job file reads as a reference; edit it by hand"
            )
        }
    }

    // MARK: - A task

    private mutating func task(
        id: String, method: String, url: URLComponents, request: JSONNode, index: Int,
        relative: Bool
    ) -> JSONWriter.Value {
        var fields: [(String, JSONWriter.Value)] = [
            ("id", .string(Self.escaped(id))), ("method", .string(method)),
        ]
        // The path as it was written (its percent-encoding kept); the query apart when its
        // names are unique, since `query` is an object.
        var path = url.percentEncodedPath.isEmpty ? "/" : url.percentEncodedPath
        if path.range(of: "%3Credacted%3E", options: .caseInsensitive) != nil {
            // A secret the job put in the path: the log has only its placeholder.
            path = path.replacingOccurrences(
                of: "%3Credacted%3E", with: "<redacted>", options: .caseInsensitive)
            warnings.append(
                "log.entries[\(index)].request.url: its path held a secret, redacted in the log; replace <redacted> in task \(id)'s path with a ${env:NAME} reference"
            )
        }
        var query: [(String, JSONWriter.Value)] = []
        if let items = url.percentEncodedQueryItems, !items.isEmpty {
            let names = items.map(\.name)
            if Set(names).count == names.count {
                for item in items {
                    let name = Self.decoded(item.name)
                    query.append(
                        (
                            name,
                            .string(queryValue(name: name, value: Self.decoded(item.value ?? "")))
                        ))
                }
            } else {
                path += "?" + (url.percentEncodedQuery ?? "")
                warnings.append(
                    "log.entries[\(index)]: a query name repeats; the query is kept in the URL as it was"
                )
            }
        }
        if relative {
            fields.append(("path", .string(Self.escaped(path))))
        } else {
            fields.append(("url", .string(Self.escaped(Self.origin(url) + path))))
        }
        if !query.isEmpty { fields.append(("query", .object(query))) }

        let keyed = WriteSettings.writes(method) && Self.keyed(request)
        let (headers, contentType) = headers(of: request, index: index, droppingKey: keyed)
        if keyed {
            // A key is the request's, not a secret: the task draws its own for what it sends,
            // as a retry or repair of it needs (trial WWW: imported as `${env:…}`).
            fields.append(("idempotencyKey", .bool(true)))
        }
        if !headers.isEmpty { fields.append(("headers", .object(headers))) }
        if let body = body(request.member("postData"), contentType: contentType, index: index) {
            fields.append(body)
        } else if let size = request.member("bodySize")?.number, size > 0,
            request.member("postData")?.member("text")?.string?.isEmpty != false
        {
            // A body the archive does not hold (too large for courier's log, or its file's):
            // the task goes without one, and says so (trial UUU: two PUTs imported bodiless,
            // in silence).
            warnings.append(
                "log.entries[\(index)]: its body (\(Int(size)) bytes) is not in the archive; task \(id) is imported without one: give it as body or bodyFile"
            )
        }
        return .object(fields)
    }

    /// The request's headers for the job (secret ones as `${env:…}` references), and its
    /// `Content-Type`.
    private mutating func headers(of request: JSONNode, index: Int, droppingKey: Bool)
        -> ([(String, JSONWriter.Value)], contentType: String?)
    {
        var headers: [(String, JSONWriter.Value)] = []
        var seen: Set<String> = []
        var contentType: String?
        if case .array(let list)? = request.member("headers")?.value {
            for header in list {
                guard let name = header.member("name")?.string,
                    let value = header.member("value")?.string
                else { continue }
                let lower = name.lowercased()
                // HTTP/2 pseudo-headers (`:authority`) are the request line, already copied.
                if lower.hasPrefix(":") || Self.droppedHeaders.contains(lower)
                    || (droppingKey && lower == "idempotency-key")
                {
                    continue
                }
                if lower == "content-type" { contentType = value }
                guard seen.insert(lower).inserted else {
                    warnings.append(
                        "log.entries[\(index)]: header \(name) repeats; the first value is kept")
                    continue
                }
                headers.append(
                    (
                        name,
                        .string(
                            Self.isSecret(name: name)
                                ? secret(kind: "header", name: name, value: value)
                                : Self.escaped(value))
                    ))
            }
        }
        return (headers, contentType)
    }

    /// Query parameters whose values are credentials. Narrower than for headers: `key`,
    /// `page_token` or `session` name plain data in many APIs' queries.
    static let secretQueryNames: Set<String> = [
        "access_token", "token", "id_token", "refresh_token", "api_key", "apikey", "password",
        "secret", "client_secret", "sig", "signature",
    ]

    private mutating func queryValue(name: String, value: String) -> String {
        // `redacted` is what the log writes for a query key marked secret.
        let normalized = name.lowercased().replacingOccurrences(of: "-", with: "_")
        let placeholder = SecretHeaders.placeholder
        if value != placeholder, value.contains(placeholder) {
            // A secret inside a value (`pre-<redacted>-post`): the variable stands for that
            // part, the rest kept (trial WWW: the whole value became the variable, and the
            // server got the token alone).
            let variable = secret(kind: "query parameter", name: name, value: value)
            return value.components(separatedBy: placeholder).map(Self.escaped)
                .joined(separator: variable)
        }
        if Self.secretQueryNames.contains(normalized) || value == placeholder
            || value == "redacted"
        {
            return secret(kind: "query parameter", name: name, value: value)
        }
        return Self.escaped(value)
    }

    /// `body` for text, `json` for a JSON body the job file can hold as JSON.
    private mutating func body(_ postData: JSONNode?, contentType: String?, index: Int)
        -> (String, JSONWriter.Value)?
    {
        guard let postData else { return nil }
        var text = postData.member("text")?.string
        if text?.isEmpty != false, let file = postData.member("_file")?.string, !file.isEmpty {
            // courier's own export of a body sent from a file: sent from it again.
            warnings.append(
                "log.entries[\(index)]: its body was sent from \(file); the task sends that file as it is when it runs"
            )
            return ("bodyFile", .string(Self.escaped(file)))
        }
        if (postData.member("_encoding") ?? postData.member("encoding"))?.string == "base64" {
            guard let encoded = text, let data = Data(base64Encoded: encoded),
                let decoded = String(data: data, encoding: .utf8)
            else {
                warnings.append(
                    "log.entries[\(index)]: a binary body cannot be written in a job file; left out (give it as bodyFile)"
                )
                return nil
            }
            text = decoded
        }
        if text == nil || text == "", case .array(let params)? = postData.member("params")?.value,
            !params.isEmpty
        {
            // A form given only as parameters.
            text = params.compactMap { param -> String? in
                guard let name = param.member("name")?.string else { return nil }
                let value = param.member("value")?.string ?? ""
                return Self.formEncoded(name) + "=" + Self.formEncoded(value)
            }.joined(separator: "&")
        }
        guard let text, !text.isEmpty else { return nil }
        if text.contains("<redacted>") {
            warnings.append(
                "log.entries[\(index)]: the body holds a redacted value (<redacted>); edit the job to supply it"
            )
        }
        let mime = (postData.member("mimeType")?.string ?? contentType ?? "").lowercased()
        if mime.contains("json"), let node = try? JSONParser.parse(text) {
            return ("json", Self.templateSafe(node))
        }
        return ("body", .string(Self.escaped(text)))
    }

    /// An `${env:NAME}` reference for a secret value, one variable per distinct value of a name.
    private mutating func secret(kind: String, name: String, value: String) -> String {
        let key = "\(kind)\n\(name.lowercased())\n\(value)"
        references += 1
        if let variable = secretValues[key] {
            redactedUses[variable]? += 1
            return "${env:\(variable)}"
        }
        let base = String(
            name.uppercased().map { $0.isLetter || $0.isNumber ? $0 : "_" }
        ).trimmingCharacters(in: CharacterSet(charactersIn: "_"))
        var variable = (kind == "header" ? "" : "QUERY_") + (base.isEmpty ? "SECRET" : base)
        if variable.first?.isNumber == true { variable = "_" + variable }
        var candidate = variable
        var number = 2
        while variables.contains(where: { $0.name == candidate }) {
            candidate = "\(variable)_\(number)"
            number += 1
        }
        secretValues[key] = candidate
        if value.contains("redacted") { redactedUses[candidate] = 1 }
        let recorded =
            value != SecretHeaders.placeholder && value.contains(SecretHeaders.placeholder)
            ? "the part redacted in the recording"
            : value.contains("redacted") ? "redacted in the recording" : "as recorded"
        variables.append(Variable(name: candidate, source: "the \(name) \(kind), \(recorded)"))
        return "${env:\(candidate)}"
    }

    /// Why `text` cannot be a job's base URL for `--base-url`, or `nil` when it can: an
    /// absolute http or https URL, with a host and no user, password, query or fragment (a
    /// path is a prefix the recorded paths are joined to). Nothing in it a job file would read
    /// as a template.
    static func baseURLProblem(_ text: String) -> String? {
        guard !text.contains(where: { "{}$".contains($0) || $0.isWhitespace }),
            Origin.httpURL(text) != nil, let components = URLComponents(string: text)
        else {
            return "takes an absolute http or https URL (http://host[:port][/path])"
        }
        if components.user != nil || components.password != nil {
            return "takes no user or password (set credentials in the job's auth)"
        }
        if components.query != nil || components.fragment != nil {
            return "takes no query or fragment"
        }
        return nil
    }

    /// The value most of `values` have; on a tie, the one seen first.
    private static func mostFrequent(_ values: [String]) -> String? {
        var counts: [String: Int] = [:]
        for value in values { counts[value, default: 0] += 1 }
        let top = counts.values.max()
        return values.first { counts[$0] == top }
    }
}

extension JSONNode {
    /// The value of an object's member, if this is an object that has it.
    fileprivate func member(_ name: String) -> JSONNode? {
        guard case .object(let members) = value else { return nil }
        return members.first { $0.key == name }?.node
    }

    fileprivate var string: String? {
        if case .string(let text) = value { text } else { nil }
    }

    fileprivate var number: Double? {
        if case .number(let number) = value { number } else { nil }
    }
}
