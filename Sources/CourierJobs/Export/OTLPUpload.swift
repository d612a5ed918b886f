import Courier
import CourierCurl
import Foundation

/// Sends an OTLP/JSON export to a collector's OTLP/HTTP receiver (`report --otlp-endpoint`),
/// with the curl transport: one POST, `Content-Type: application/json`.
enum OTLPUpload {
    /// Why the export was not taken: the endpoint's answer or the transport's error, with the
    /// URL's credentials removed.
    struct Failure: Error {
        var message: String
    }

    /// The URL to post to: a base URL (no path, or `/`) gets OTLP's `/v1/traces`, as
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` does; any other path is taken as the traces endpoint
    /// itself (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`).
    static func tracesURL(_ text: String) -> URL? {
        guard Origin.httpURL(text) != nil, var components = URLComponents(string: text) else {
            return nil
        }
        if components.percentEncodedPath.isEmpty || components.percentEncodedPath == "/" {
            components.percentEncodedPath = "/v1/traces"
        }
        return components.url
    }

    /// - Parameter headers: besides `Content-Type` (`OTEL_EXPORTER_OTLP_HEADERS`: an API key,
    ///   say); never shown.
    static func send(
        _ body: [UInt8], to url: URL, headers extra: [(name: String, value: String)] = []
    ) async throws(Failure) {
        let client = CurlHTTPClient(configuration: .init(timeout: 30))
        defer { client.shutdown() }
        let shown = HTTPError.withoutCredentials(url).absoluteString
        var headers: HTTPHeaders = ["Content-Type": "application/json"]
        for (name, value) in extra { headers[name] = value }
        let response: HTTPResponse
        do {
            response = try await client.perform(
                HTTPRequest(
                    url: url, method: .post, headers: headers, body: Data(body),
                    secretHeaderNames: Set(extra.map { $0.name.lowercased() })))
        } catch {
            throw Failure(message: "cannot send the traces to \(shown): \(error)")
        }
        guard (200..<300).contains(response.status) else {
            let text = String(decoding: response.body.prefix(200), as: UTF8.self)
            throw Failure(message: "\(shown) answered \(response.status): \(text)")
        }
    }
}
