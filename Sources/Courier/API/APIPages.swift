extension DefaultAPIClient {
    /// The decoded pages of `request`, following `rule` (by default the `Link` header's
    /// `rel="next"`) with the job runner's rules and loop guard.
    /// ```swift
    /// let rule = PaginationRule(next: .page(parameter: "page", start: 1), stopWhenEmpty: "/results")
    /// for try await page in client.pages(of: ListUsersRequest(page: 1), following: rule) {
    ///     users += page.results
    /// }
    /// ```
    /// Each page is checked and decoded as ``perform(_:)`` does, so an unacceptable status
    /// throws ``APIError``; a loop throws ``PaginationError``.
    public func pages<Endpoint: APIRequest>(
        of request: Endpoint, following rule: PaginationRule = .nextLink
    ) -> APIPages<Endpoint> {
        APIPages(client: self, endpoint: request, rule: rule)
    }
}

/// The decoded pages of an ``APIRequest``, fetched one at a time as they are asked for.
public struct APIPages<Endpoint: APIRequest>: AsyncSequence, Sendable {
    public typealias Element = Endpoint.Response

    let client: DefaultAPIClient
    let endpoint: Endpoint
    let rule: PaginationRule

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(client: client, endpoint: endpoint, rule: rule)
    }

    /// Fetches and decodes the next page when asked; `nil` once the pages are done.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let client: DefaultAPIClient
        let endpoint: Endpoint
        let rule: PaginationRule
        var paginator: Paginator?
        var next: HTTPRequest?
        var done = false

        init(client: DefaultAPIClient, endpoint: Endpoint, rule: PaginationRule) {
            self.client = client
            self.endpoint = endpoint
            self.rule = rule
        }

        public mutating func next() async throws -> Endpoint.Response? {
            guard !done else { return nil }
            done = true  // until a next page is known; a throw ends the sequence too
            let request: HTTPRequest
            if let next {
                request = client.authorizingPage(next)
            } else {
                request = try client.makeHTTPRequest(for: endpoint)
                paginator = Paginator(rule: rule, first: request)
            }
            let answer = try await client.send(request, for: endpoint)
            next = try paginator?.next(after: answer.response, to: request)
            done = next == nil
            return answer.value
        }
    }
}
