import Courier
import Foundation

/// A request as a runnable `curl` command line for bash, with every secret written as a
/// reference to an environment variable, never as its value.
///
/// Basic credentials become `-u "alice:${PASSWORD}"` (the `Authorization` header is dropped:
/// curl sends the same one), a bearer token `-H "Authorization: Bearer ${API_TOKEN}"`. A secret
/// that stands percent-encoded in a URL or JSON-escaped in a body is written where it stands,
/// as an expression that encodes the variable the same way (``SecretReferences``). A secret
/// found verbatim in the environment is named after its variable; any other one (a `--header`
/// value, a password from the job file) becomes `${COURIER_SECRET_n}`. ``notes`` names every
/// variable the commands use and holds the shell functions they call. A secret no one
/// variable spells where it stands is `<redacted>`, said in a comment line: never printed.
struct CurlCommand {
    private var references: SecretReferences
    /// Finds every form of every searchable secret: no such range is printed as it is.
    private var redactor: Redactor
    /// Lines to print before the commands: what to export, and the helper functions if needed.
    private(set) var notes: [String] = []
    /// Lines that set each OAuth2 client's access token from its token endpoint, to print after
    /// the notes and before the commands (``AccessToken``).
    private(set) var tokenCommands: [String] = []

    /// An OAuth2 client's access token in the commands: the requests carry `placeholder` as
    /// their bearer token, written as `${name}`, and the script sets `name` first with a token
    /// request of its own (the client's secret and refresh token as references too). A replay
    /// asks for a fresh token, as a run does; no token is ever printed.
    struct AccessToken {
        let name: String
        let placeholder: String
        let client: OAuth2Configuration

        /// One variable per client, `COURIER_OAUTH2_TOKEN`, `COURIER_OAUTH2_TOKEN_2`…
        static func variables(for clients: [OAuth2Configuration]) -> [AccessToken] {
            let unique = Array(Set(clients)).sorted { $0.description < $1.description }
            return unique.enumerated().map { index, client in
                AccessToken(
                    name: "COURIER_OAUTH2_TOKEN" + (index == 0 ? "" : "_\(index + 1)"),
                    placeholder: "courier-oauth2-token-\(index)-\(UUID().uuidString)",
                    client: client)
            }
        }
    }

    /// What a rendered command relies on.
    private struct Usage {
        var names: Set<String> = []
        var helpers = false
        /// A secret stood in a form no reference writes: `<redacted>` stands in its place.
        var redacted = false
    }

    /// - Parameters:
    ///   - secrets: the job's secrets and the `--header` values.
    ///   - requests: the requests to be printed: their secret headers, Basic passwords and secret
    ///     query values are secrets too, and ``notes`` covers exactly what they use.
    ///   - accessTokens: the OAuth2 access tokens the requests carry as placeholders.
    init(
        secrets: Set<String>, environment: [String: String], requests: [HTTPRequest] = [],
        accessTokens: [AccessToken] = []
    ) {
        var references = SecretReferences(environment: environment)
        for token in accessTokens {
            references.add(
                token.placeholder, named: token.name,
                meaning:
                    "set below from \(HTTPError.withoutCredentials(token.client.tokenURL).absoluteString)"
            )
        }
        for secret in secrets.sorted() {
            references.add(secret, meaning: "a secret of the job or a --header value")
        }
        let tokenRequests = accessTokens.map { $0.client.tokenRequest() }
        for request in requests + tokenRequests {
            Self.addCredentials(of: request, to: &references)
        }
        self.references = references
        redactor = references.redactor
        var usage = Usage()
        for request in requests + tokenRequests { _ = render(request, &usage) }
        // The variables courier names are numbered among those the script uses (trial DDD
        // read `COURIER_SECRET_2` with no `_1`: a secret no request held had taken it).
        usage.names = references.renumber(used: usage.names)
        self.references = references
        redactor = references.redactor
        for (token, request) in zip(accessTokens, tokenRequests) {
            // The response's access_token, read without a JSON tool.
            tokenCommands.append(
                #"\#(token.name)=$(\#(render(request, &usage)) | sed -n 's/.*"access_token" *: *"\([^"]*\)".*/\1/p')"#
            )
        }
        usage.names.subtract(accessTokens.map(\.name))
        notes = references.notes(using: usage.names)
        if usage.helpers { notes += SecretReferences.helperDefinitions }
    }

    /// `curl -sS -X METHOD "URL" -H "…" --data-binary "…"` for the request; after a comment
    /// line that says so when a secret in it could only be written as `<redacted>`.
    func command(for request: HTTPRequest) -> String {
        var usage = Usage()
        let command = render(request, &usage)
        guard usage.redacted else { return command }
        return
            "# a secret stands in this request in a form no variable can be written in: it is \(Redactor.placeholder) here; fill it in before running\n"
            + command
    }

    private func render(_ request: HTTPRequest, _ usage: inout Usage) -> String {
        // What goes on the wire: a `user:password@` leaves the URL for an Authorization header.
        let wire = try? WireRequest(request)
        let url = wire?.url ?? request.url
        let headers = wire?.headers ?? request.headers
        var parts = [
            "curl", "-sS", "-X", word(request.method.rawValue, &usage),
            word(url.absoluteString, &usage),
        ]
        for field in headers {
            if field.name.lowercased() == "authorization",
                let (user, password) = Self.basicCredentials(field.value)
            {
                parts += ["-u", word("\(user):", secret: password, &usage)]
                continue
            }
            if request.isSecretHeader(field.name) {
                // The credential after an authorization scheme, or the whole value: a variable
                // of its own, whatever its length, and never in part.
                let scheme = Self.scheme(of: field)
                if let scheme {
                    parts += [
                        "-H",
                        word(
                            "\(field.name): \(scheme.name) ", secret: scheme.credential, &usage),
                    ]
                } else {
                    parts += ["-H", word("\(field.name): ", secret: field.value, &usage)]
                }
                continue
            }
            parts += ["-H", word("\(field.name): \(field.value)", &usage)]
        }
        if headers.contains("Accept-Encoding") { parts.append("--compressed") }
        var prefix = ""
        if let body = request.body {
            // curl gives a body without one `application/x-www-form-urlencoded`: the run sent
            // none, and the script sends what the run did.
            if !headers.contains("Content-Type") { parts += ["-H", "\"Content-Type:\""] }
            parts.append("--data-binary")
            if let text = String(data: body, encoding: .utf8), !text.contains("\0") {
                parts.append(word(text, &usage))
            } else {
                prefix = binaryBody(body, &usage) + " | "
                parts.append("@-")
            }
        }
        return prefix + parts.joined(separator: " ")
    }

    /// Bytes that are not text travel as base64 through a pipe, each secret in them as its
    /// variable: `{ printf %s 'QUJD' | base64 -d; printf %s "${TOKEN}"; }`.
    private func binaryBody(_ body: Data, _ usage: inout Usage) -> String {
        let bytes = [UInt8](body)
        var steps: [String] = []
        var plain: [UInt8] = []
        func flush() {
            guard !plain.isEmpty else { return }
            steps.append("printf %s '\(Data(plain).base64EncodedString())' | base64 -d")
            plain = []
        }
        var index = 0
        while index < bytes.count {
            if let entry = references.entries.first(where: {
                $0.searchable && SecretReferences.starts(bytes, with: $0.value, at: index)
            }) {
                flush()
                steps.append("printf %s \"${\(entry.name)}\"")
                usage.names.insert(entry.name)
                index += entry.value.count
            } else {
                plain.append(bytes[index])
                index += 1
            }
        }
        flush()
        return "{ " + steps.joined(separator: "; ") + "; }"
    }

    /// A double-quoted shell word: `\`, `"`, `$` and `` ` `` escaped, secrets as references.
    ///
    /// Where a secret stands is the redactor's to say (it knows every form, a secret's
    /// percent-encoded or escaped pieces included); each such range is written as the one
    /// reference that spells it whole, or as `<redacted>` when none does. Never in part: a
    /// shorter secret found inside a longer one's unrecognised form once left the rest of
    /// the longer one printed.
    ///
    /// - Parameter secret: a value the request says is secret (a Basic password, a secret
    ///   header's), written as its variable after `text` whatever its length.
    private func word(_ text: String, secret: String? = nil, _ usage: inout Usage) -> String {
        let bytes = Array(text.utf8)
        var output: [UInt8] = [UInt8(ascii: "\"")]
        func plain(_ slice: ArraySlice<UInt8>) {
            for byte in slice {
                if "\\\"$`".utf8.contains(byte) { output.append(UInt8(ascii: "\\")) }
                output.append(byte)
            }
        }
        var index = 0
        for range in redactor.secretRanges(in: bytes) {
            plain(bytes[index..<range.lowerBound])
            if let found = references.match(in: bytes, at: range.lowerBound),
                found.length == range.count
            {
                output += Array(found.form.reference(to: found.entry.name).utf8)
                usage.names.insert(found.entry.name)
                usage.helpers = usage.helpers || found.form != .raw
            } else {
                output += Array(Redactor.placeholder.utf8)
                usage.redacted = true
            }
            index = range.upperBound
        }
        plain(bytes[index...])
        if let secret {
            if let (entry, form) = references.reference(for: secret) {
                output += Array(form.reference(to: entry.name).utf8)
                usage.names.insert(entry.name)
                usage.helpers = usage.helpers || form != .raw
            } else {
                output += Array(Redactor.placeholder.utf8)
                usage.redacted = true
            }
        }
        output.append(UInt8(ascii: "\""))
        return String(decoding: output, as: UTF8.self)
    }

    /// The scheme and credential of an `…Authorization: Scheme credential` field.
    private static func scheme(of field: HTTPHeaders.Field) -> (name: String, credential: String)? {
        let parts = field.value.split(separator: " ", maxSplits: 1)
        guard field.name.lowercased().hasSuffix("authorization"), parts.count == 2 else {
            return nil
        }
        return (String(parts[0]), String(parts[1]))
    }

    /// The user and password of an `Authorization: Basic …` value, when it decodes to them.
    static func basicCredentials(_ value: String) -> (user: String, password: String)? {
        let parts = value.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "basic",
            let data = Data(base64Encoded: parts[1].trimmingCharacters(in: .whitespaces)),
            let text = String(data: data, encoding: .utf8),
            let colon = text.firstIndex(of: ":")
        else { return nil }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }

    /// Makes secrets of what the request itself says is secret, when no known secret covers it
    /// already: a Basic password, the credential of an `Authorization` header, the value of
    /// any other secret header, the value of a secret query item.
    private static func addCredentials(
        of request: HTTPRequest, to references: inout SecretReferences
    ) {
        let headers = (try? WireRequest(request))?.headers ?? request.headers
        for field in headers where request.isSecretHeader(field.name) {
            let name = field.name.lowercased()
            if name == "authorization", let (user, password) = basicCredentials(field.value) {
                if references.reference(for: password) == nil {
                    references.add(password, meaning: "the password of \(user) (Basic auth)")
                }
                continue
            }
            if let scheme = scheme(of: field) {
                guard references.reference(for: scheme.credential) == nil else { continue }
                references.add(
                    scheme.credential,
                    meaning: "the credential of the \(field.name) header (\(scheme.name))")
            } else if references.reference(for: field.value) == nil {
                references.add(field.value, meaning: "the value of the \(field.name) header")
            }
        }
        guard !request.secretQueryNames.isEmpty,
            let items = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems
        else { return }
        for item in items where request.secretQueryNames.contains(item.name) {
            if let value = item.value, !references.covers(value) {
                references.add(value, meaning: "the value of query item \(item.name)")
            }
        }
    }
}
