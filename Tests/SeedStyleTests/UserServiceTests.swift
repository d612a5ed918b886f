import Courier
import Foundation
import Testing

/// Seed 001's unit tests, unchanged in substance: the service over a mock client.
@Suite("UserService Tests")
struct UserServiceTests {
    @Test("List users sends correct parameters")
    func listUsers() async throws {
        let mock = MockAPIClient()
        let service = UserService(apiClient: mock)
        mock.setMockResponse(Page<User>(page: 1, results: [], totalPages: 1, totalResults: 0))
        _ = try await service.listUsers(page: 2, query: "swift")
        #expect(mock.lastPath == "/v1/users")
        let items = try #require(mock.lastQueryItems)
        #expect(items.contains { $0.name == "page" && $0.value == "2" })
        #expect(items.contains { $0.name == "q" && $0.value == "swift" })
    }

    @Test("Get user returns correct user")
    func getUser() async throws {
        let mock = MockAPIClient()
        let service = UserService(apiClient: mock)
        let user = User(
            id: "123", name: "Swift", email: "swift@example.com", avatarURL: nil, createdAt: 0,
            updatedAt: 0)
        mock.setMockResponse(user)
        let response = try await service.getUser(id: "123")
        #expect(response.id == "123")
        #expect(mock.lastPath == "/v1/users/123")
    }

    /// The first article's client reads its configuration's `apiKey`, `additionalHeaders` and
    /// `validateSSL` to build each request's headers (trial KKK: they did not compile).
    @Test("a configuration reads back as the articles read it")
    func configurationAsTheArticlesReadIt() {
        var configuration = APIConfiguration(
            baseURL: URL(string: "https://api.test")!, apiKey: "k-123", validateSSL: false,
            additionalHeaders: ["X-Client": "app", "Accept-Language": "en"])
        var headers: [String: String] = [:]
        headers["Authorization"] = "Bearer \(configuration.apiKey)"
        for (key, value) in configuration.additionalHeaders { headers[key] = value }
        #expect(
            headers == [
                "Authorization": "Bearer k-123", "X-Client": "app", "Accept-Language": "en",
            ])
        #expect(configuration.validateSSL == false && configuration.validatesTLS == false)
        configuration.apiKey = "k-456"
        #expect(configuration.auth == .bearer("k-456"))
    }
}
