import Foundation

extension HTTPResponse: CustomStringConvertible, CustomReflectable {
    /// ``url`` fit to show: no user name or password, and each query value its request marked
    /// secret (``HTTPRequest/secretQueryNames``, `.query` auth) replaced.
    public var displayURL: URL { secrets.display(url) }

    /// The status, the URL fit to show and the header fields, secret values redacted.
    public var description: String {
        var text = "\(status) \(displayURL.absoluteString)"
        for field in secrets.redacting(headers) { text += "\n\(field.name): \(field.value)" }
        text += "\n(\(bodyCount) bytes of body)"
        return text
    }

    /// What `dump` and debuggers show: the stored fields, with the URL and both header lists
    /// redacted as in ``description`` (a mirror of the stored values would print an
    /// `Authorization` the request sent, and a `.query` API key in the URL).
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "status": status, "headers": secrets.redacting(headers), "body": body,
                "url": displayURL, "redirectCount": redirectCount, "timings": timings,
                "requestHeaders": secrets.redacting(requestHeaders), "savedBody": savedBody as Any,
                "bodyEndUnchecked": bodyEndUnchecked as Any,
            ], displayStyle: .struct)
    }

    /// This response, keeping the secrets `request` marked for its description (a response a
    /// transport or a double made for `request`).
    package func redacting(secretsOf request: HTTPRequest) -> HTTPResponse {
        var response = self
        response.secrets = RequestSecrets(of: request)
        return response
    }
}

extension HTTPResponse {
    /// The secret values its request carried, in the forms a server would echo them: each
    /// secret header's value and its credential after the scheme (`Bearer …`, `Basic …`), and
    /// each secret query value, decoded and as sent. For scrubbing a body shown in a message
    /// (an error page that repeats the request); short values (under 4 characters) are left
    /// out, as they would erase ordinary text.
    package var secretValues: [String] {
        var values: [String] = []
        for field in requestHeaders
        where SecretHeaders.isSecret(field.name, marked: secrets.headerNames) {
            values.append(field.value)
            if let space = field.value.firstIndex(of: " ") {
                values.append(String(field.value[field.value.index(after: space)...]))
            }
        }
        if !secrets.queryNames.isEmpty,
            let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?
                .percentEncodedQueryItems
        {
            for item in items {
                let name = item.name.removingPercentEncoding ?? item.name
                guard secrets.queryNames.contains(name), let value = item.value else { continue }
                values.append(value)
                if let decoded = value.removingPercentEncoding { values.append(decoded) }
            }
        }
        return values.filter { $0.count >= 4 }.sorted { $0.count > $1.count }
    }
}
