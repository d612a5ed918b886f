import Courier
import Foundation

public final class UserService: Sendable {
    private let apiClient: any APIClient

    init(apiClient: some APIClient) {
        self.apiClient = apiClient
    }

    public func getUser(id: String) async throws -> User {
        try await apiClient.perform(GetUserRequest(id: id))
    }

    public func listUsers(page: Int = 1, perPage: Int = 20, query: String? = nil) async throws
        -> Page<User>
    {
        try await apiClient.perform(ListUsersRequest(page: page, perPage: perPage, query: query))
    }

    func echo(note: String) async throws -> Data {
        try await apiClient.perform(EchoNoteRequest(note: note))
    }
}
