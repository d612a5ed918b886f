import Courier
import Foundation

/// The example service's endpoints, one request type each.
enum HTTPBinRequests {
    struct Echo: APIRequest {
        typealias Response = RequestEcho
        let parameters: [String: String]
        var path: String { "/get" }
        var queryItems: [URLQueryItem]? {
            parameters.sorted { $0.key < $1.key }.map {
                URLQueryItem(name: $0.key, value: $0.value)
            }
        }
    }

    struct GetUserAgent: APIRequest {
        typealias Response = UserAgent
        var path: String { "/user-agent" }
        var headers: [String: String]? { ["User-Agent": "courier-example/1"] }
    }

    struct CheckBasicAuth: APIRequest {
        typealias Response = BasicAuthResult
        let user: String
        let password: String
        var path: String { "/basic-auth/\(user)/\(password)" }
    }

    struct PostNote: APIRequest {
        typealias Response = PostedNote
        let note: NewNote
        var method: HTTPMethod { .post }
        var path: String { "/post" }
        var content: APIRequestBody? { .json(note) }
    }
}
