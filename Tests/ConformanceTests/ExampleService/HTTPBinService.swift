import Courier
import Foundation

/// An example service: the only thing the rest of an app talks to for this API. It owns its
/// client and turns endpoints into plain async methods.
struct HTTPBinService: Sendable {
    private let client: any APIClient

    init(client: any APIClient) { self.client = client }

    /// One entry point that wires transport, configuration and auth together.
    static func make(
        baseURL: URL, transport: any HTTPClient, auth: Authentication? = nil
    ) -> HTTPBinService {
        HTTPBinService(
            client: DefaultAPIClient(
                httpClient: transport,
                configuration: APIConfiguration(
                    baseURL: baseURL, auth: auth, headers: ["Accept": "application/json"])))
    }

    func echo(_ parameters: [String: String]) async throws -> RequestEcho {
        try await client.perform(HTTPBinRequests.Echo(parameters: parameters))
    }

    func userAgent() async throws -> String {
        try await client.perform(HTTPBinRequests.GetUserAgent()).value
    }

    func isAuthenticated(user: String, password: String) async throws -> Bool {
        try await client.perform(HTTPBinRequests.CheckBasicAuth(user: user, password: password))
            .isAuthenticated
    }

    func post(_ note: NewNote) async throws -> NewNote {
        try await client.perform(HTTPBinRequests.PostNote(note: note)).json
    }
}
