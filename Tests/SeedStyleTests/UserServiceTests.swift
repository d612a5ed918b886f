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
}
