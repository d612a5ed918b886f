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
    private let httpClient: any HTTPClient

    /// - Parameter httpClient: the transport; redirects are followed above it when the
    ///   configuration's `maxRedirects` is set.
    public init(httpClient: any HTTPClient, configuration: APIConfiguration) {
        self.configuration = configuration
        if let maxRedirects = configuration.maxRedirects {
            self.httpClient = RedirectingHTTPClient(
                wrapping: AnyHTTPClient(httpClient), maxHops: maxRedirects)
        } else {
            self.httpClient = httpClient
        }
    }

    public func send<Endpoint: APIRequest>(_ request: Endpoint) async throws -> APIResponse<
        Endpoint.Response
    > {
        let httpRequest = try makeHTTPRequest(for: request)
        let response = try await httpClient.perform(httpRequest)
        let origin = (httpRequest.method, httpRequest.url)
        guard request.accepts(status: response.status) else {
            throw APIError(
                .unacceptableStatus, "unacceptable status \(response.status)", request: origin,
                response: response)
        }
        do {
            let value = try request.decode(response, using: configuration.decoder)
            return APIResponse(value: value, response: response)
        } catch let error as DecodingError {
            throw APIError(
                .decoding, APIError.describe(error), request: origin, response: response)
        }
    }

    /// The HTTP request this client sends for an API request, auth included.
    public func makeHTTPRequest(for request: some APIRequest) throws -> HTTPRequest {
        let url = try URLBuilder.url(
            baseURL: configuration.baseURL, path: request.path, query: request.query)
        var headers = configuration.headers
        var body: Data?
        if let requestBody = request.body {
            let (data, contentType) = try encode(requestBody)
            body = data
            headers.replaceOrAdd("Content-Type", contentType)
        }
        var httpRequest = HTTPRequest(
            url: url,
            method: request.method,
            headers: headers.merging(request.headers),
            body: body,
            timeout: request.timeout ?? configuration.timeout,
            validatesTLS: configuration.validatesTLS)
        configuration.auth?.apply(to: &httpRequest)
        return httpRequest
    }

    private func encode(_ body: APIRequestBody) throws(APIError) -> (Data, String) {
        switch body {
        case .data(let data, let contentType):
            return (data, contentType)
        case .form(let items):
            return (Data(URLBuilder.encodeQuery(items).utf8), "application/x-www-form-urlencoded")
        case .json(let value):
            do {
                return (try configuration.encoder.encode(value), "application/json")
            } catch {
                throw APIError(.invalidRequest, "the JSON body did not encode: \(error)")
            }
        }
    }
}
