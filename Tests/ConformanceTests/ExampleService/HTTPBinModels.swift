/// Models for the example service: what httpbin returns, with `CodingKeys` where its JSON
/// names are not Swift names.
struct RequestEcho: Decodable, Sendable {
    let args: [String: String]
    let headers: [String: String]
    let url: String
}

struct UserAgent: Decodable, Sendable {
    let value: String

    enum CodingKeys: String, CodingKey {
        case value = "user-agent"
    }
}

struct BasicAuthResult: Decodable, Sendable {
    let isAuthenticated: Bool
    let user: String

    enum CodingKeys: String, CodingKey {
        case isAuthenticated = "authenticated"
        case user
    }
}

struct NewNote: Codable, Sendable, Equatable {
    let title: String
    let body: String
}

struct PostedNote: Decodable, Sendable {
    let json: NewNote
}
