import Foundation

/// A `WWW-Authenticate: Digest …` challenge (RFC 7616) and the `Authorization` that answers
/// it: pure values, so the rules are tested without a server.
struct DigestChallenge: Sendable, Hashable {
    enum Algorithm: String, Sendable {
        case md5 = "MD5"
        case md5Session = "MD5-sess"
        case sha256 = "SHA-256"
        case sha256Session = "SHA-256-sess"

        func hash(_ text: String) -> String {
            switch self {
            case .md5, .md5Session: MD5.hex(of: Array(text.utf8))
            case .sha256, .sha256Session: SHA256.hex(of: Array(text.utf8))
            }
        }

        var isSession: Bool { self == .md5Session || self == .sha256Session }
        /// SHA-256 first, as RFC 7616 §3.7 asks of a client offered both.
        var preference: Int { self == .sha256 || self == .sha256Session ? 1 : 0 }
    }

    var realm: String
    var nonce: String
    var opaque: String?
    var algorithm: Algorithm
    /// Whether the server asked for `qop=auth` (else the RFC 2069 form, no nonce count).
    var qopAuth: Bool
    /// The nonce was stale: the credentials were right, only the nonce expired.
    var stale: Bool

    /// The best Digest challenge among a response's `WWW-Authenticate` fields, or `nil` when
    /// none offers an algorithm and quality of protection this client can answer (`auth-int`
    /// alone, an unknown algorithm).
    static func best(in headers: HTTPHeaders) -> DigestChallenge? {
        headers.values(for: "WWW-Authenticate").flatMap(challenges(in:))
            .max { $0.algorithm.preference < $1.algorithm.preference }
    }

    /// The Digest challenges in one field value (which may hold several schemes).
    static func challenges(in value: String) -> [DigestChallenge] {
        var found: [DigestChallenge] = []
        var scanner = Substring(value)
        while let range = scanner.range(of: "digest ", options: .caseInsensitive) {
            // A scheme name starts the value or follows a comma.
            let before = scanner[..<range.lowerBound].trimmingCharacters(in: .whitespaces)
            scanner = scanner[range.upperBound...]
            guard before.isEmpty || before.hasSuffix(",") else { continue }
            let parameters = Self.parameters(&scanner)
            if let challenge = DigestChallenge(parameters) { found.append(challenge) }
        }
        return found
    }

    private init?(_ parameters: [String: String]) {
        guard let realm = parameters["realm"], let nonce = parameters["nonce"] else { return nil }
        let algorithmName = parameters["algorithm"] ?? "MD5"
        guard
            let algorithm = [Algorithm.md5, .md5Session, .sha256, .sha256Session].first(where: {
                $0.rawValue.caseInsensitiveCompare(algorithmName) == .orderedSame
            })
        else { return nil }
        let qops = (parameters["qop"] ?? "").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        guard parameters["qop"] == nil || qops.contains("auth") else { return nil }
        self.realm = realm
        self.nonce = nonce
        self.opaque = parameters["opaque"]
        self.algorithm = algorithm
        self.qopAuth = qops.contains("auth")
        self.stale = parameters["stale"]?.lowercased() == "true"
    }

    /// `name=value` and `name="quoted \" value"` pairs up to the next scheme or the end.
    private static func parameters(_ text: inout Substring) -> [String: String] {
        var result: [String: String] = [:]
        while true {
            text = text.drop { $0 == " " || $0 == "," || $0 == "\t" }
            guard let equals = text.firstIndex(of: "="),
                !text[..<equals].contains(" ")
            else { return result }
            let name = text[..<equals].lowercased()
            text = text[text.index(after: equals)...]
            var value = ""
            if text.first == "\"" {
                text = text.dropFirst()
                var escaped = false
                while let character = text.first {
                    text = text.dropFirst()
                    if escaped {
                        value.append(character)
                        escaped = false
                    } else if character == "\\" {
                        escaped = true
                    } else if character == "\"" {
                        break
                    } else {
                        value.append(character)
                    }
                }
            } else {
                let end = text.firstIndex(of: ",") ?? text.endIndex
                value = text[..<end].trimmingCharacters(in: .whitespaces)
                text = text[end...]
            }
            result[name] = value
        }
    }

    /// The `Authorization` value for `method` and `uri` (the request target as sent).
    func authorization(
        user: String, password: String, method: String, uri: String, count: Int, cnonce: String
    ) -> String {
        var first = algorithm.hash("\(user):\(realm):\(password)")
        if algorithm.isSession { first = algorithm.hash("\(first):\(nonce):\(cnonce)") }
        let second = algorithm.hash("\(method):\(uri)")
        let nc = String(format: "%08x", count)
        let response =
            qopAuth
            ? algorithm.hash("\(first):\(nonce):\(nc):\(cnonce):auth:\(second)")
            : algorithm.hash("\(first):\(nonce):\(second)")
        var fields = [
            "username=\(Self.quoted(user))", "realm=\(Self.quoted(realm))",
            "nonce=\(Self.quoted(nonce))", "uri=\(Self.quoted(uri))",
            "algorithm=\(algorithm.rawValue)", "response=\(Self.quoted(response))",
        ]
        if qopAuth { fields += ["qop=auth", "nc=\(nc)", "cnonce=\(Self.quoted(cnonce))"] }
        if let opaque { fields.append("opaque=\(Self.quoted(opaque))") }
        return "Digest " + fields.joined(separator: ", ")
    }

    private static func quoted(_ text: String) -> String {
        "\""
            + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(
                of: "\"", with: "\\\"") + "\""
    }
}
