import Courier
import Foundation

/// What an `auth` object says: credentials sent as written, or tokens from an OAuth2 token
/// endpoint, which the runner asks for while the job runs.
enum AuthForm {
    case credentials(Authentication)
    case oauth2(OAuth2Configuration)

    var credentials: Authentication? {
        if case .credentials(let authentication) = self { authentication } else { nil }
    }

    var oauth2: OAuth2Configuration? {
        if case .oauth2(let configuration) = self { configuration } else { nil }
    }
}

/// `auth.oauth2`: a token endpoint, a grant and a client (docs/job-file.md, OAuth2).
extension JobDecoder {
    /// The `grant` values, as RFC 6749 names them.
    enum GrantName: String, CaseIterable {
        case clientCredentials = "client_credentials"
        case refreshToken = "refresh_token"
    }

    static func decodeOAuth2(
        _ node: JSONNode, path: String, keys: JobObjectKeys, context: DecodingContext
    ) -> OAuth2Configuration? {
        guard var reader = NodeReader(node, path: path, keys: keys, context: context) else {
            return nil
        }
        defer { reader.rejectUnknownKeys() }
        let tokenURL = reader.string("tokenURL", required: true).flatMap {
            tokenEndpoint($0, reader: &reader)
        }
        if reader.take("grant") == nil {
            context.error(
                "\(path).grant", "is required (\"client_credentials\" or \"refresh_token\")",
                at: node)
        }
        let grant = reader.choice("grant", of: GrantName.self)
        let clientID = reader.string("clientId", required: true)
        if clientID?.isEmpty == true, let idNode = reader.take("clientId") {
            reader.fail("clientId", "expected the client's id, found \"\"", at: idNode)
        }
        let secret = secretReference("clientSecret", reader: &reader)
        let refreshToken = secretReference("refreshToken", reader: &reader)
        let scope = reader.string("scope")
        if let scope,
            scope.trimmingCharacters(in: .whitespaces).isEmpty
                || scope.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }),
            let scopeNode = reader.take("scope")
        {
            reader.fail(
                "scope", "expected scopes separated by spaces, found \"\(scope)\"", at: scopeNode)
        }
        let clientAuth = reader.choice(
            "clientAuth", of: OAuth2Configuration.ClientAuthentication.self)
        switch grant {
        case .clientCredentials:
            if secret == nil, reader.take("clientSecret") == nil {
                context.error(
                    "\(path).clientSecret",
                    "is required with the client_credentials grant (a ${env:NAME} or ${file:PATH} reference)",
                    at: node)
            }
            if let refreshNode = reader.take("refreshToken") {
                reader.fail(
                    "refreshToken", "is only for \"grant\": \"refresh_token\"", at: refreshNode)
            }
        case .refreshToken:
            if refreshToken == nil, reader.take("refreshToken") == nil {
                context.error(
                    "\(path).refreshToken",
                    "is required with the refresh_token grant (a ${env:NAME} or ${file:PATH} reference)",
                    at: node)
            }
        case nil:
            break
        }
        if clientAuth != nil, reader.take("clientSecret") == nil,
            let authNode = reader.take("clientAuth")
        {
            reader.fail(
                "clientAuth",
                "needs a clientSecret (a client without one names itself in the form body)",
                at: authNode)
        }
        guard let tokenURL, let grant, let clientID, !clientID.isEmpty,
            grant == .clientCredentials || refreshToken != nil
        else { return nil }
        if let secret {
            // What goes on the wire as Basic authentication, which a server could echo.
            context.addSecret(OAuth2Configuration.basicCredential(clientID, secret))
        }
        return OAuth2Configuration(
            tokenURL: tokenURL,
            grant: grant == .refreshToken ? .refreshToken(refreshToken!) : .clientCredentials,
            clientID: clientID, clientSecret: secret, scope: scope,
            clientAuthentication: clientAuth ?? .basic)
    }

    /// The token endpoint's URL: absolute, without credentials of its own, and over https
    /// unless it is on this machine (RFC 6749 §3.2: the request carries the client's secret).
    private static func tokenEndpoint(_ text: String, reader: inout NodeReader) -> URL? {
        let node = reader.take("tokenURL")!
        guard let url = Origin.httpURL(text) else {
            reader.fail("tokenURL", "expected an absolute https URL, found \"\(text)\"", at: node)
            return nil
        }
        if url.user != nil || url.password != nil {
            reader.fail(
                "tokenURL",
                "may not hold credentials; give them as clientId and clientSecret", at: node)
            return nil
        }
        if url.scheme?.lowercased() == "http", Origin(url)?.isLoopback != true {
            reader.fail(
                "tokenURL",
                "expected an https URL: the token request carries the client's secret (http only to a loopback address), found \"\(text)\"",
                at: node)
            return nil
        }
        return url
    }

    /// A secret of the client (`clientSecret`, `refreshToken`): it must be one whole
    /// `${env:NAME}` or `${file:PATH}` reference, never written into the job file, which is
    /// shared and committed. Its value, once resolved, is a secret of the job.
    private static func secretReference(_ key: String, reader: inout NodeReader) -> String? {
        guard let node = reader.take(key) else { return nil }
        guard case .string(let raw) = node.value else { return reader.string(key) }
        let isReference =
            (raw.hasPrefix("${env:") || raw.hasPrefix("${file:")) && raw.hasSuffix("}")
            && raw.firstIndex(of: "}") == raw.index(before: raw.endIndex)
        guard isReference else {
            reader.fail(
                key,
                "expected a ${env:NAME} or ${file:PATH} reference: a secret does not belong in the job file",
                at: node)
            return nil
        }
        let errors = reader.context.errors.count
        guard let value = reader.string(key), reader.context.errors.count == errors else {
            return nil  // the reference's own error (a variable not set, a missing file) says why
        }
        if value.isEmpty {
            reader.fail(key, "is empty (\(raw))", at: node)
            return nil
        }
        return value
    }
}
