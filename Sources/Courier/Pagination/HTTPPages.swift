extension HTTPClient {
    /// The pages of `request`, one response each, following `rule` (by default the `Link`
    /// header's `rel="next"`) with the job runner's rules and loop guard.
    /// ```swift
    /// for try await page in client.pages(of: HTTPRequest(url: issuesURL)) {
    ///     try handle(page.body)
    /// }
    /// ```
    /// A page whose status is not 2xx is the last one: it is returned so the caller can see
    /// it, and no next page is derived from an error body. A loop throws ``PaginationError``.
    public func pages(of request: HTTPRequest, following rule: PaginationRule = .nextLink)
        -> HTTPPages
    {
        HTTPPages(client: self, first: request, rule: rule)
    }
}

/// The responses of a paginated request, fetched one at a time as they are asked for.
public struct HTTPPages: AsyncSequence, Sendable {
    public typealias Element = HTTPResponse

    let client: any HTTPClient
    let first: HTTPRequest
    let rule: PaginationRule

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(client: client, paginator: Paginator(rule: rule, first: first), next: first)
    }

    /// Fetches the next page when asked; `nil` once the pages are done.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let client: any HTTPClient
        var paginator: Paginator
        var next: HTTPRequest?

        public mutating func next() async throws -> HTTPResponse? {
            guard let request = next else { return nil }
            next = nil
            let response = try await client.perform(request)
            if (200..<300).contains(response.status) {
                next = try paginator.next(after: response, to: request)
            }
            return response
        }
    }
}
