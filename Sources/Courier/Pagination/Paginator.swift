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
        seen.insert(Self.identity(first))
    }

    /// Items seen on the pages so far (for ``PaginationRule/stopAtTotal``).
    var itemsSeen = 0
    /// What the rule put into the last request it gave (``Checkpoint/step``).
    private var lastStep: String?

    /// Where the pages stand after a page that had a next one: enough to go on from there in
    /// another process (``resuming(_:rule:first:)``), without the pages before it.
    package struct Checkpoint: Sendable, Equatable {
        /// Pages fetched so far.
        package var pages: Int
        /// Items seen so far (``PaginationRule/stopAtTotal``).
        package var itemsSeen: Int
        /// What the next request differs from the first by: the URL the response named
        /// (`linkHeader`, `json`, `header`), the value set in the query (`cursor`,
        /// `headerParam`, `page`, `offset`), or the JSON text set in the body (`body…`).
        package var step: String

        package init(pages: Int, itemsSeen: Int, step: String) {
            self.pages = pages
            self.itemsSeen = itemsSeen
            self.step = step
        }
    }

    /// Where the pages stand, once a page led to another; `nil` before.
    package var checkpoint: Checkpoint? {
        lastStep.map { Checkpoint(pages: pages, itemsSeen: itemsSeen, step: $0) }
    }

    /// The pages as they stood at `checkpoint`, and the request for the page after it. Pages
    /// before it are not known again, so a loop through them is not seen.
    package static func resuming(
        _ checkpoint: Checkpoint, rule: PaginationRule, first: HTTPRequest
    ) throws(PaginationError) -> (paginator: Paginator, request: HTTPRequest) {
        var paginator = Paginator(rule: rule, first: first)
        paginator.pages = checkpoint.pages
        paginator.itemsSeen = checkpoint.itemsSeen
        paginator.lastStep = checkpoint.step
        let request = try paginator.request(stepping: checkpoint.step, from: first)
        paginator.seen.insert(Self.identity(request))
        return (paginator, request)
    }

    /// What tells two pages' requests apart: the URL, and the body when the pages move in it.
    /// A secret query item (`.query` auth, which the API client adds to each page) is left
    /// out: the first page had it and a server's next link not, so a link back to the first
    /// page was fetched once more before the loop was seen (trial KK).
    private static func identity(_ request: HTTPRequest) -> String {
        var url = request.url.absoluteString
        if !request.secretQueryNames.isEmpty,
            var components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)
        {
            let kept = components.percentEncodedQueryItems?.filter {
                !request.secretQueryNames.contains($0.name.removingPercentEncoding ?? $0.name)
            }
            components.percentEncodedQueryItems = kept?.isEmpty == true ? nil : kept
            url = components.url?.absoluteString ?? url
        }
        guard let body = request.body, !body.isEmpty else { return url }
        return url + "\n" + String(decoding: body, as: UTF8.self)
    }

    /// Set when the pages ended on the first page and it looked full
    /// (``PaginationRule/pageSize`` items, or items where ``PaginationRule/stopWhenEmpty``
    /// says only an empty page ends) with no next page, or when a response names a next page
    /// the rule does not follow: why the sync may have stopped early, in words, for a warning.
    public private(set) var missingNext: String?

    /// The request for the page after `response` (the answer to `request`), or `nil` when the
    /// pages are done.
    public mutating func next(after response: HTTPResponse, to request: HTTPRequest)
        throws(PaginationError)
        -> HTTPRequest?
    {
        try next(
            after: response, to: request, document: try? JSONParser.parse([UInt8](response.body)))
    }

    /// ``next(after:to:)`` for a caller that parsed the body already (`document`, `nil` when it
    /// is not JSON): the job runner parses a page once for its records, captures and cursor.
    package mutating func next(
        after response: HTTPResponse, to request: HTTPRequest, document: JSONNode?
    ) throws(PaginationError) -> HTTPRequest? {
        pages += 1
        guard pages < rule.maxPages else { return nil }
        // A rule that reads the page's body cannot read one that is not JSON: the listing had
        // ended there as if done (trial GG: plain text, or JSON nested past the parser's 512
        // levels, ended a listing ok after one page). An empty body ends it as before.
        if document == nil, !response.body.isEmpty, readsBody {
            throw PaginationError(
                message:
                    "page \(pages)'s body is not JSON (or nests deeper than 512 levels): its next page cannot be read from it"
            )
        }
        switch fieldStop(document) {
        case .goOn: break
        case .end: return nil
        case .unmatched(let stopRule, let pointer):
            try unmatchedStop(
                stopRule, pointer: pointer,
                nextStep: try nextStep(after: response, to: request, document: document))
            return nil
        }
        guard let step = try nextStep(after: response, to: request, document: document) else {
            try noteMissingNext(in: response, document: document)
            return nil
        }
        let next = try self.request(stepping: step, from: request)
        guard seen.insert(Self.identity(next)).inserted else {
            let body =
                next.body.map { " with the body \(String(decoding: $0, as: UTF8.self))" } ?? ""
            throw PaginationError(
                message:
                    "pagination loops: page \(pages + 1) would fetch \(next.displayURL.absoluteString)\(rule.movesInBody ? body : "") again"
            )
        }
        lastStep = step
        return next
    }

    /// Whether the rule reads the page's body: its next page, or what ends the pages.
    private var readsBody: Bool {
        if rule.stopWhenEmpty != nil || rule.stopWhenFalse != nil || rule.stopAtTotal != nil {
            return true
        }
        switch rule.next {
        case .jsonURL, .cursor, .bodyCursor: return true
        default: return false
        }
    }

    /// What the rule finds in `response` for the next page (``Checkpoint/step``), or `nil` when
    /// it finds none.
    private func nextStep(
        after response: HTTPResponse, to request: HTTPRequest, document: JSONNode?
    ) throws(PaginationError) -> String? {
        switch rule.next {
        case .linkHeader(let relation):
            return LinkHeader.target(
                of: relation, in: response.headers.values(for: "Link"), base: request.url)?
                .absoluteString
        case .jsonURL(let pointer):
            guard let document, let node = JSONPointer.resolve(pointer, in: document),
                case .string(let text) = node.value, !text.isEmpty
            else { return nil }
            return try Self.url(text, relativeTo: request.url).absoluteString
        case .headerURL(let name):
            guard let text = Self.field(name, of: response) else { return nil }
            return try Self.url(text, relativeTo: request.url).absoluteString
        case .headerParameter(let name, _):
            return Self.field(name, of: response)
        case .cursor(let pointer, _):
            guard let document, let node = JSONPointer.resolve(pointer, in: document) else {
                return nil
            }
            switch node.value {
            case .string(let text) where !text.isEmpty: return text
            case .number: return node.numberSource ?? ""
            default: return nil
            }
        case .page(_, let start):
            return String(start + pages)
        case .offset(_, let step):
            return String(step * pages)
        case .bodyCursor(let pointer, _):
            guard let document, let node = JSONPointer.resolve(pointer, in: document) else {
                return nil
            }
            switch node.value {
            case .string(let text) where !text.isEmpty: break
            case .number: break
            default: return nil
            }
            var bytes: [UInt8] = []
            JSONWriter.write(node, to: &bytes)
            return String(decoding: bytes, as: UTF8.self)
        case .bodyPage(_, let start):
            return String(start + pages)
        case .bodyOffset(_, let step):
            return String(step * pages)
        }
    }

    /// `request` moved on by `step` (``Checkpoint/step``): another URL, or a value set in its
    /// query or JSON body.
    private func request(stepping step: String, from request: HTTPRequest)
        throws(PaginationError) -> HTTPRequest
    {
        var next = request
        switch rule.next {
        case .linkHeader, .jsonURL, .headerURL:
            return following(try Self.url(step, relativeTo: first.url))
        case .headerParameter(_, let parameter), .cursor(_, let parameter),
            .page(let parameter, _), .offset(let parameter, _):
            next.url = Self.setting(parameter, to: step, in: request.url)
        case .bodyCursor(_, let field), .bodyPage(let field, _), .bodyOffset(let field, _):
            guard let value = try? JSONParser.parse(Array(step.utf8)) else {
                throw PaginationError(message: "the next page's value \(step) is not JSON")
            }
            next.body = try Self.body(of: request, setting: field, to: value)
        }
        return next
    }

    /// The JSON body of `request` with `value` at `field`, written compactly; everything else
    /// in it stays as it was written.
    private static func body(of request: HTTPRequest, setting field: String, to value: JSONNode)
        throws(PaginationError) -> Data
    {
        guard let body = request.body, let document = try? JSONParser.parse([UInt8](body)),
            let changed = JSONPointer.setting(value, at: field, in: document)
        else {
            throw PaginationError(
                message:
                    "the next page goes in the request's JSON body at \(field), but the body is not a JSON object or array that has a place there"
            )
        }
        var bytes: [UInt8] = []
        JSONWriter.write(changed, to: &bytes)
        return Data(bytes)
    }

    /// Sets ``missingNext`` (or throws, with ``PaginationRule/requireNext``) when the page
    /// that had no next page looked full (the first page; any page with `requireNext`), or when the response names a next page in a way
    /// the rule does not follow (a `Link` with `rel="next"`, `Next-Page`, `X-Next-Page`,
    /// `X-Next`): a sync that stops after one page without a word is the worst way to fail.
    private mutating func noteMissingNext(in response: HTTPResponse, document: JSONNode?)
        throws(PaginationError)
    {
        let message: String
        // A full last page after the rule found next pages is an end whose total is a multiple
        // of the page size: the rule works (trial U: a Datasette sync of 300 rows at 25 a page
        // warned every night). The guard is for a rule that never matched; `requireNext`
        // still fails any full page without a next one.
        if let full = fullPage(document), pages == 1 || rule.requireNext {
            message = "page \(pages) \(full) but \(absence(in: response))"
        } else if let unfollowed = unfollowedNext(in: response) {
            message = "page \(pages) had no next page by the rule, but \(unfollowed)"
        } else {
            return
        }
        if rule.requireNext { throw PaginationError(message: message + " (requireNext)") }
        missingNext = message
    }

    /// Why the rule found no next page, in words, with a hint when the response has a field
    /// of the name a `Link` relation was given (a header name given as a relation).
    private func absence(in response: HTTPResponse) -> String {
        switch rule.next {
        case .linkHeader(let relation):
            let hint =
                response.headers.values(for: relation).isEmpty
                ? ""
                : ": the response has a \"\(relation)\" header field, which {\"header\": \"\(relation)\"} follows"
            return "no Link header has rel=\"\(relation)\"\(hint)"
        case .jsonURL(let pointer), .cursor(let pointer, _), .bodyCursor(let pointer, _):
            return "the body has no next value at \(pointer) (it is missing, null or empty)"
        case .headerURL(let name), .headerParameter(let name, _):
            return "the response has no \(name) header field"
        case .page, .offset, .bodyPage, .bodyOffset:
            return "no next page was found"
        }
    }

    /// How the page looked full (its items against `pageSize`, or items where `stopWhen`
    /// wants an empty page), or `nil`.
    private func fullPage(_ document: JSONNode?) -> String? {
        let pointer = rule.items ?? rule.stopWhenEmpty ?? ""
        guard let document,
            case .array(let items)? = JSONPointer.resolve(pointer, in: document)?.value
        else { return nil }
        if let size = rule.pageSize {
            return items.count >= size
                ? "has \(items.count) items, a full page (pageSize \(size)),"
                : nil
        }
        if rule.stopWhenEmpty != nil, !items.isEmpty {
            return "has \(items.count) items (stopWhen says an empty page ends the pages)"
        }
        return nil
    }

    /// The well-known ways a response names its next page, and the rule that follows each:
    /// in words, for the first that is present and that this rule does not follow.
    private func unfollowedNext(in response: HTTPResponse) -> String? {
        if case .linkHeader(let relation) = rule.next, relation.lowercased() != "next",
            LinkHeader.target(
                of: "next", in: response.headers.values(for: "Link"), base: first.url) != nil
        {
            return
                "the response has a Link header with rel=\"next\", which {\"linkHeader\": \"next\"} follows"
        }
        for name in ["Next-Page", "X-Next-Page", "X-Next"] {
            switch rule.next {
            case .headerURL(let followed), .headerParameter(let followed, _):
                if followed.lowercased() == name.lowercased() { continue }
            default: break
            }
            guard let value = Self.field(name, of: response) else { continue }
            // A URL (Kinto's Next-Page) is followed as it is; a number or token (GitLab's
            // X-Next-Page: 3) is sent back as a query parameter.
            let isURL = value.contains("/")
            let follows =
                isURL
                ? "{\"header\": \"\(name)\"}"
                : "{\"headerParam\": {\"header\": \"\(name)\", \"param\": \"page\"}} (with the parameter the API takes)"
            return
                "the response has a \(name) header field (\(isURL ? "a URL" : "a value")), which \(follows) follows"
        }
        return nil
    }

    /// The first value of response header `name`, trimmed, when it is not empty.
    private static func field(_ name: String, of response: HTTPResponse) -> String? {
        guard
            let value = response.headers.values(for: name).first?.trimmingCharacters(
                in: .whitespaces),
            !value.isEmpty
        else { return nil }
        return value
    }

    /// `text` as an absolute http(s) URL, relative to `base`.
    private static func url(_ text: String, relativeTo base: URL) throws(PaginationError) -> URL {
        guard let url = URL(string: text, relativeTo: base)?.absoluteURL, Origin.isHTTP(url) else {
            throw PaginationError(message: "the next page's URL \"\(text)\" is not an http(s) URL")
        }
        return url
    }

    /// The first page's request, sent to `url`; credentials only on the first page's origin.
    private func following(_ url: URL) -> HTTPRequest {
        var next = first
        next.url = url
        if Origin(url) != Origin(first.url) { next.removeSecretHeaders() }
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
