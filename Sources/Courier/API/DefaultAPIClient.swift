import Foundation

/// The standard ``APIClient``: builds the URL, adds auth and headers, sends through any
/// ``HTTPClient``, checks the status and decodes.
/// ```swift
/// let client = DefaultAPIClient(
///     httpClient: URLSessionHTTPClient(),
///     configuration: APIConfiguration(baseURL: url, auth: .bearer(token)))
/// let user = try await client.perform(GetUser(id: "42"))
/// ```
public struct DefaultAPIClient: APIClient {
    public let configuration: APIConfiguration
    let httpClient: any HTTPClient

    /// - Parameter httpClient: the transport; redirects are followed above it when the
    ///   configuration's `maxRedirects` is set.
    public init(httpClient: any HTTPClient, configuration: APIConfiguration) {
        self.configuration = configuration
        var client = AnyHTTPClient(httpClient)
        if let maxRedirects = configuration.maxRedirects {
            client = AnyHTTPClient(RedirectingHTTPClient(wrapping: client, maxHops: maxRedirects))
        }
        // Provided tokens are attached above redirects (so a cross-origin hop drops them) and
        // only for the API's own origin; a 401 refreshes the token once and resends.
        if case .provider(let source) = configuration.auth {
            client = AnyHTTPClient(
                AuthenticatingHTTPClient(
                    wrapping: client, provider: source.provider,
                    origin: Origin(configuration.baseURL)))
        }
        // Hooks sit above redirects and auth: one call each per request the caller makes.
        if configuration.willSend != nil || configuration.didReceive != nil {
            client = AnyHTTPClient(
                HookingHTTPClient(
                    wrapping: client, willSend: configuration.willSend,
                    didReceive: configuration.didReceive))
        }
        self.httpClient = client
    }

    public func perform<Endpoint: APIRequest>(_ request: Endpoint) async throws
        -> Endpoint.Response
    {
        try await send(request).value
    }

    /// Sends the request and returns the decoded value together with the HTTP response (for
    /// headers such as pagination links, and timings).
    public func send<Endpoint: APIRequest>(_ request: Endpoint) async throws -> APIResponse<
        Endpoint.Response
    > {
        try await send(makeHTTPRequest(for: request), for: request)
    }

    /// Sends `httpRequest`, built for `request`, then checks and decodes its response.
    func send<Endpoint: APIRequest>(_ httpRequest: HTTPRequest, for request: Endpoint)
        async throws -> APIResponse<Endpoint.Response>
    {
        let response = try await httpClient.perform(httpRequest)
        guard request.accepts(status: response.status) else {
            if let mapped = configuration.mapError?(response) { throw mapped }
            throw APIError(unacceptable: response, of: httpRequest)
        }
        try ContentTypeValidation.check(
            response,
            accepting: request.acceptableContentTypes ?? configuration.acceptableContentTypes,
            request: httpRequest)
        do {
            let value = try request.decode(response, using: configuration.decoder)
            return APIResponse(value: value, response: response)
        } catch let error as DecodingError {
            let message =
                ContentTypeValidation.notJSONMessage(for: error, response: response)
                ?? DecodingErrorText.describe(error)
            throw APIError(.decoding, message, request: httpRequest, response: response)
        }
    }

    /// The HTTP request this client sends for an API request, auth included.
    ///
    /// Headers are the configuration's, then the request's (sorted by name, since a dictionary
    /// has no order) replacing same-named ones. Credentials go only to the base URL's origin:
    /// an absolute `path` to another host is sent without them.
    public func makeHTTPRequest(for request: some APIRequest) throws -> HTTPRequest {
        let url = try URLBuilder.url(
            baseURL: configuration.baseURL, path: request.path, query: queryItems(of: request))
        var headers = configuration.headers
        if Origin(url) != Origin(configuration.baseURL) {
            // The configuration's secret headers are credentials as `auth` is: they go only to
            // the base URL's origin (trial VVV: an absolute URL elsewhere got Authorization,
            // X-Api-Key and Cookie, which a redirect there would have dropped).
            headers.removeSecrets()
        }
        var body = request.body
        var streamed: StreamedBody?
        if let content = request.content {
            guard body == nil else {
                throw APIError(
                    .invalidRequest, "the request sets both body and content; give one of them")
            }
            let (encoded, contentType) = try encode(content)
            switch encoded {
            case .data(let data): body = data
            case .streamed(let parts): streamed = parts
            }
            headers.replaceOrAdd("Content-Type", contentType)
        }
        let requestHeaders = (request.headers ?? [:]).sorted { $0.key < $1.key }
        headers = headers.merging(HTTPHeaders(requestHeaders))
        if case .multipart(let form) = request.content {
            try MultipartContentType.reconcile(&headers, with: form)
        }
        var httpRequest = HTTPRequest(
            url: url,
            method: request.method,
            headers: headers,
            body: body,
            timeout: request.timeout ?? configuration.timeout,
            validatesTLS: configuration.validatesTLS)
        httpRequest.streamedBody = streamed
        httpRequest.tls = configuration.tls
        if case .header(let name, _)? = configuration.auth {
            // The key's header is secret whoever sets it: a request's own value for it (which
            // it sends instead of the configured one) had been printed, and followed a
            // redirect to another origin (trial MM).
            httpRequest.secretHeaderNames.insert(name.lowercased())
        }
        if let auth = configuration.auth, Origin(url) == Origin(configuration.baseURL) {
            if !auth.isOverridden(by: HTTPHeaders(requestHeaders)) {
                auth.apply(to: &httpRequest)
            } else if case .provider = auth {
                httpRequest.authorizationIsCallers = true
            }
        }
        return httpRequest
    }

    /// A page after the first (``APIPages``), its URL the server's: a `.query` key goes on it
    /// again on the base URL's origin, unless the URL carries it already. The other forms are
    /// headers, which the page keeps (trial X: page 2 went without the `api_key`).
    func authorizingPage(_ page: HTTPRequest) -> HTTPRequest {
        guard case .query(let name, _)? = configuration.auth,
            Origin(page.url) == Origin(configuration.baseURL),
            !(URLComponents(url: page.url, resolvingAgainstBaseURL: false)?.queryItems ?? [])
                .contains(where: { $0.name == name })
        else { return page }
        var page = page
        configuration.auth?.apply(to: &page)
        return page
    }

    /// The request's query items, then its ``APIRequest/queryParameters``' fields.
    private func queryItems(of request: some APIRequest) throws(APIError) -> [URLQueryItem] {
        guard let parameters = request.queryParameters else { return request.queryItems ?? [] }
        return (request.queryItems ?? [])
            + (try configuration.formEncoder.queryItems(from: parameters))
    }

    /// A body in memory or streamed from parts.
    private enum EncodedBody {
        case data(Data)
        case streamed(StreamedBody)
    }

    private func encode(_ body: APIRequestBody) throws(APIError) -> (EncodedBody, String) {
        switch body {
        case .data(let data, let contentType):
            return (.data(data), contentType)
        case .form(let items):
            return (
                .data(Data(URLBuilder.encodeQuery(items).utf8)),
                "application/x-www-form-urlencoded"
            )
        case .encodedForm(let value, let encoder):
            let text = try (encoder ?? configuration.formEncoder).encode(value)
            return (.data(Data(text.utf8)), "application/x-www-form-urlencoded")
        case .multipart(let form):
            return (.streamed(form.body), form.contentType)
        case .file(let url, let contentType):
            return (.streamed(.file(url)), contentType)
        case .json(let value):
            do {
                return (.data(try configuration.encoder.encode(value)), "application/json")
            } catch {
                throw APIError(.invalidRequest, "the JSON body did not encode: \(error)")
            }
        }
    }
}
