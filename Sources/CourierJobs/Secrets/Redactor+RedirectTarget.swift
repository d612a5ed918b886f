import Courier
import Foundation

extension Redactor {
    /// Where `response` ended after redirects, as a log line or a recording shows it. The URL
    /// is the server's: a secret the request's URL held may come back in a form of the
    /// server's own, which no search for the secret's known forms finds (trial BB: Datasette
    /// wrote a captured token in a path as `capt0ken~2By~2Fz~3Dw…`, and the log, the HAR
    /// export and the recording kept it). So when the request's URL held a secret, only the
    /// target's origin is shown, its path and query redacted; its userinfo never is.
    func redirectTarget(of response: HTTPResponse, for request: HTTPRequest) -> String {
        let target = HTTPError.withoutCredentials(response.url).absoluteString
        let heldSecret =
            !request.secretQueryNames.isEmpty
            || !secretRanges(in: Array(request.url.absoluteString.utf8)).isEmpty
        guard heldSecret,
            let parts = URLComponents(url: response.url, resolvingAgainstBaseURL: false),
            let scheme = parts.scheme, var host = parts.percentEncodedHost
        else { return target }
        if host.contains(":"), !host.hasPrefix("[") { host = "[\(host)]" }
        // The origin as the URL wrote it: its port only when it named one.
        let port = parts.port.map { ":\($0)" } ?? ""
        return "\(scheme)://\(host)\(port)/\(Self.placeholder)"
    }
}
