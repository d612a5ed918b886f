import Courier
import Foundation

struct GetUserRequest: APIRequest {
    typealias Response = User

    let id: String
    var path: String { "/v1/users/\(id)" }
    var method: HTTPMethod { .get }
    var headers: [String: String]? { nil }
    var body: Data? { nil }
    var queryItems: [URLQueryItem]? { nil }
}

struct ListUsersRequest: APIRequest {
    typealias Response = Page<User>

    let page: Int
    let perPage: Int
    let query: String?
    var path: String { "/v1/users" }
    var method: HTTPMethod { .get }
    var headers: [String: String]? { nil }
    var body: Data? { nil }
    var queryItems: [URLQueryItem]? {
        var items = [
            URLQueryItem(name: "page", value: String(page)),
            URLQueryItem(name: "per_page", value: String(perPage)),
        ]
        if let query, !query.isEmpty { items.append(URLQueryItem(name: "q", value: query)) }
        return items
    }
}

/// A request that carries its own header and a raw body, as seed 000's protocol allows.
struct EchoNoteRequest: APIRequest {
    typealias Response = Data

    let note: String
    var path: String { "/echo" }
    var method: HTTPMethod { .post }
    var headers: [String: String]? { ["X-Note": note, "Content-Type": "text/plain"] }
    var body: Data? { Data(note.utf8) }
    var queryItems: [URLQueryItem]? { [URLQueryItem(name: "note", value: note)] }
}
