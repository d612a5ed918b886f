/// How a task's pages follow one another (`paginate` in a job file).
public struct PaginationRule: Sendable {
    public enum Next: Sendable {
        /// RFC 8288 `Link` header with this relation (`next`).
        case linkHeader(String)
        /// The next page's URL at this JSON Pointer of the body (relative or absolute).
        case jsonURL(String)
        /// A cursor at this JSON Pointer, sent back as this query parameter.
        case cursor(pointer: String, parameter: String)
        /// Page numbers in this query parameter, from `start`.
        case page(parameter: String, start: Int)
        /// Offsets in this query parameter, by `step` items.
        case offset(parameter: String, step: Int)
        /// The next page's URL in this response header (absolute, or relative to the page's),
        /// as in a `Next-Page: /items?page=3` field. A missing or empty field ends the pages.
        case headerURL(String)
        /// The value of this response header (a page number or a token, as GitLab's
        /// `X-Next-Page: 3`) sent back as this query parameter. A missing or empty field ends
        /// the pages.
        case headerParameter(header: String, parameter: String)
        /// A cursor at this JSON Pointer of the response, written into the request's JSON
        /// body at `field` (a JSON Pointer): a search endpoint's `"cursor"`, GraphQL's
        /// `/variables/after` from `pageInfo.endCursor`.
        case bodyCursor(pointer: String, field: String)
        /// Page numbers written into the request's JSON body at `field`, from `start`.
        case bodyPage(field: String, start: Int)
        /// Offsets written into the request's JSON body at `field`, by `step` items.
        case bodyOffset(field: String, step: Int)
    }

    public var next: Next
    /// A JSON Pointer to the page's items: an empty or missing array ends the pages. Required
    /// for page numbers and offsets (nothing else says when they end).
    public var stopWhenEmpty: String?
    /// The most pages fetched; reaching it ends the task normally.
    public var maxPages: Int
    /// A JSON Pointer to the page's items, for the full-page check; `stopWhenEmpty`'s when
    /// `nil`, and the whole body (an array) when neither is set.
    public var items: String?
    /// How many items a full page has. A full page with no next page looks like a sync that
    /// stopped early: ``Paginator/missingNext`` says so.
    public var pageSize: Int?
    /// Whether a full page with no next page fails (``PaginationError``) rather than ending
    /// the pages with ``Paginator/missingNext`` set.
    public var requireNext: Bool
    /// A JSON Pointer to a flag of the page (`has_more`, GraphQL's `pageInfo/hasNextPage`):
    /// `false`, `null` or missing ends the pages.
    public var stopWhenFalse: String?
    /// A JSON Pointer to the number of items in all (`total`): the pages end once the items
    /// seen (at ``items``, else ``stopWhenEmpty``, else the whole body) reach it.
    public var stopAtTotal: String?

    /// A rule following `next`; each stop left `nil` is not checked.
    public init(
        next: Next, stopWhenEmpty: String? = nil, maxPages: Int = 1000, items: String? = nil,
        pageSize: Int? = nil, requireNext: Bool = false, stopWhenFalse: String? = nil,
        stopAtTotal: String? = nil
    ) {
        self.next = next
        self.stopWhenEmpty = stopWhenEmpty
        self.maxPages = maxPages
        self.items = items
        self.pageSize = pageSize
        self.requireNext = requireNext
        self.stopWhenFalse = stopWhenFalse
        self.stopAtTotal = stopAtTotal
    }
}

extension PaginationRule {
    /// Whether the pages move in the request's body rather than its URL.
    public var movesInBody: Bool {
        switch next {
        case .bodyCursor, .bodyPage, .bodyOffset: true
        default: false
        }
    }

    /// Follow the RFC 8288 `Link` header's `rel="next"`, as GitHub and most REST APIs send it.
    public static let nextLink = PaginationRule(next: .linkHeader("next"))
}
