import Foundation

/// The pages of one request as a pure value: feed it each page's request and response, and it
/// says which request comes next, that the pages are done, or that they loop. The job runner's
/// `paginate` and ``HTTPClient/pages(of:following:)`` both follow pages with it.
///
/// A next URL on another origin (scheme, host, port) than the first page gets none of the
/// first page's credentials: the redirect rule. A next URL or cursor seen before is a loop, so
/// an API that repeats its last page cannot keep a job running (Airbyte #28226).
public struct Paginator: Sendable {
    public let rule: PaginationRule
    public let first: HTTPRequest
    /// Pages fetched so far.
    public private(set) var pages = 0
    private var seen: Set<String> = []

    /// Starts at `first`, the first page's request.
    public init(rule: PaginationRule, first: HTTPRequest) {
        self.rule = rule
        self.first = first
        seen.insert(first.url.absoluteString)
    }

    /// The request for the page after `response` (the answer to `request`), or `nil` when the
    /// pages are done.
    public mutating func next(after response: HTTPResponse, to request: HTTPRequest)
        throws(PaginationError)
        -> HTTPRequest?
    {
        pages += 1
        guard pages < rule.maxPages else { return nil }
        let document = try? JSONParser.parse([UInt8](response.body))
        if let pointer = rule.stopWhenEmpty {
            guard let document,
                case .array(let items)? = JSONPointer.resolve(pointer, in: document)?.value,
                !items.isEmpty
            else { return nil }
        }
        var next: HTTPRequest
        switch rule.next {
        case .linkHeader(let relation):
            guard
                let url = LinkHeader.target(
                    of: relation, in: response.headers.values(for: "Link"), base: request.url)
            else { return nil }
            next = following(url)
        case .jsonURL(let pointer):
            guard let document, let node = JSONPointer.resolve(pointer, in: document),
                case .string(let text) = node.value, !text.isEmpty
            else { return nil }
            guard let url = URL(string: text, relativeTo: request.url)?.absoluteURL,
                Origin.isHTTP(url)
            else {
                throw PaginationError(
                    message: "the next page's URL \"\(text)\" is not an http(s) URL")
            }
            next = following(url)
        case .cursor(let pointer, let parameter):
            guard let document, let node = JSONPointer.resolve(pointer, in: document) else {
                return nil
            }
            let cursor: String
            switch node.value {
            case .string(let text) where !text.isEmpty: cursor = text
            case .number: cursor = node.numberSource ?? ""
            default: return nil
            }
            next = request
            next.url = Self.setting(parameter, to: cursor, in: request.url)
        case .page(let parameter, let start):
            next = request
            next.url = Self.setting(parameter, to: String(start + pages), in: request.url)
        case .offset(let parameter, let step):
            next = request
            next.url = Self.setting(parameter, to: String(step * pages), in: request.url)
        }
        guard seen.insert(next.url.absoluteString).inserted else {
            throw PaginationError(
                message:
                    "pagination loops: page \(pages + 1) would fetch \(next.displayURL.absoluteString) again"
            )
        }
        return next
    }

    /// The first page's request, sent to `url`; credentials only on the first page's origin.
    private func following(_ url: URL) -> HTTPRequest {
        var next = first
        next.url = url
        if Origin(url) != Origin(first.url) {
            for name in next.headers.names where next.isSecretHeader(name) {
                next.headers.remove(name)
            }
        }
        return next
    }

    /// `url` with query parameter `name` set to `value` (replaced when present).
    private static func setting(_ name: String, to value: String, in url: URL) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            return url
        }
        var items = components.percentEncodedQueryItems ?? []
        let encoded = PercentEncoding.unreserved(value)
        if let index = items.firstIndex(where: { $0.name == name }) {
            items[index].value = encoded
        } else {
            items.append(URLQueryItem(name: name, value: encoded))
        }
        components.percentEncodedQueryItems = items
        return components.url ?? url
    }
}
