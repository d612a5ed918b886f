import Foundation

/// What a request marked secret beyond ``SecretHeaders/alwaysSecret``: the header names it
/// marked and its secret query names. A response keeps them (``HTTPResponse``), since it holds
/// the URL it came from and the headers its request went with, so that printing or dumping it
/// redacts what the request's own description would.
package struct RequestSecrets: Sendable, Hashable {
    /// Lowercased header names.
    package var headerNames: Set<String> = []
    package var queryNames: Set<String> = []

    package init() {}

    package init(of request: HTTPRequest) {
        headerNames = request.secretHeaderNames  // stored lowercased
        queryNames = request.secretQueryNames
    }

    /// `url` fit to show: no user name or password, and each secret query value replaced.
    package func display(_ url: URL) -> URL {
        let bare = HTTPError.withoutCredentials(url)
        guard !queryNames.isEmpty,
            var components = URLComponents(url: bare, resolvingAgainstBaseURL: false),
            let items = components.percentEncodedQueryItems
        else { return bare }
        components.percentEncodedQueryItems = items.map { item in
            let name = item.name.removingPercentEncoding ?? item.name
            guard queryNames.contains(name), item.value != nil else { return item }
            return URLQueryItem(name: item.name, value: "redacted")
        }
        return components.url ?? bare
    }

    /// `headers` with each secret value replaced by ``SecretHeaders/placeholder``.
    package func redacting(_ headers: HTTPHeaders) -> HTTPHeaders {
        SecretHeaders.redacting(headers, marked: headerNames)
    }
}
