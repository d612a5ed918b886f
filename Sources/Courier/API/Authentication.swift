import Foundation

/// How requests prove who is calling. Every form is treated as a secret: its header is dropped
/// on a cross-origin redirect and redacted in logs, and a `.query` key is redacted from every
/// URL an error or log shows.
public enum Authentication: Sendable, Hashable {
    /// `Authorization: Bearer <token>`.
    case bearer(String)
    /// `Authorization: Basic <base64(user:password)>`.
    case basic(user: String, password: String)
    /// An API key in a header, for example `X-Api-Key`.
    case header(name: String, value: String)
    /// An API key as a query item, for example `?api_key=…`.
    case query(name: String, value: String)

    /// Adds the credentials to a request.
    public func apply(to request: inout HTTPRequest) {
        switch self {
        case .bearer(let token):
            request.headers.replaceOrAdd("Authorization", "Bearer \(token)")
        case .basic(let user, let password):
            let encoded = Data("\(user):\(password)".utf8).base64EncodedString()
            request.headers.replaceOrAdd("Authorization", "Basic \(encoded)")
        case .header(let name, let value):
            request.headers.replaceOrAdd(name, value)
            request.secretHeaderNames.insert(name.lowercased())
        case .query(let name, let value):
            request.url = URLBuilder.appending(
                [URLQueryItem(name: name, value: value)], to: request.url)
            request.secretQueryNames.insert(name)
        }
    }
}
