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
    }

    public var next: Next
    /// A JSON Pointer to the page's items: an empty or missing array ends the pages. Required
    /// for page numbers and offsets (nothing else says when they end).
    public var stopWhenEmpty: String?
    /// The most pages fetched; reaching it ends the task normally.
    public var maxPages: Int

    public init(next: Next, stopWhenEmpty: String? = nil, maxPages: Int = 1000) {
        self.next = next
        self.stopWhenEmpty = stopWhenEmpty
        self.maxPages = maxPages
    }
}

extension PaginationRule {
    /// Follow the RFC 8288 `Link` header's `rel="next"`, as GitHub and most REST APIs send it.
    public static let nextLink = PaginationRule(next: .linkHeader("next"))
}
