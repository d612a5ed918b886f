import Foundation

/// The checks of a response's `Content-Type` that ``DefaultAPIClient`` makes between the
/// status check and decoding.
enum ContentTypeValidation {
    /// Throws `.unacceptableContentType` when `response` has a body whose `Content-Type`
    /// matches none of `patterns` (`nil`: anything goes).
    ///
    /// An empty body passes whatever its type (a 204, a HEAD): there is nothing to misread.
    /// A body without a `Content-Type` passes only `*/*`, as Alamofire's `validate()` does.
    static func check(
        _ response: HTTPResponse, accepting patterns: [String]?, request: HTTPRequest
    ) throws(APIError) {
        guard let patterns, !response.body.isEmpty else { return }
        var parsed: [MediaType] = []
        for pattern in patterns {
            guard let type = MediaType(pattern) else {
                throw APIError(
                    .invalidRequest,
                    "the acceptable content type '\(pattern)' is not a type/subtype pattern",
                    request: request, response: response)
            }
            parsed.append(type)
        }
        let expected = patterns.joined(separator: ", ")
        guard let actual = response.mediaType else {
            if parsed.contains(where: { $0.type == "*" && $0.subtype == "*" }) { return }
            throw APIError(
                .unacceptableContentType,
                "the response (status \(response.status)) has no Content-Type; expected \(expected)",
                request: request, response: response)
        }
        guard !parsed.contains(where: actual.matches) else { return }
        throw APIError(
            .unacceptableContentType,
            "unacceptable content type \(actual.essence) (status \(response.status)); "
                + "expected \(expected)",
            request: request, response: response)
    }

    /// For a body that is not JSON at all and says it is something else (`text/html` from a
    /// proxy's error page, say), a message that says so: "expected JSON, the server answered
    /// text/html (first bytes: "<!DOCTYPE html>…")". `nil` when the body is JSON, when its
    /// type is JSON or absent, or when the error is about a key rather than the whole body.
    static func notJSONMessage(for error: DecodingError, response: HTTPResponse) -> String? {
        guard case .dataCorrupted(let context) = error, context.codingPath.isEmpty else {
            return nil
        }
        // No body at all (a 204, say) is not "text/html, first bytes: """ (trial X).
        if response.body.isEmpty, response.savedBody == nil {
            return
                "expected JSON, the response (status \(response.status)) has no body; decode an Optional or EmptyResponse where none may come"
        }
        guard let type = response.mediaType, !type.isJSON,
            (try? JSONSerialization.jsonObject(with: response.body, options: .fragmentsAllowed))
                == nil
        else { return nil }
        return "expected JSON, the server answered \(type.essence) (first bytes: "
            + "\(firstBytes(of: response)))"
    }

    /// The start of the body as quoted text, in its charset, control characters escaped. A
    /// secret the request carried is redacted in it: error pages repeat the request, and the
    /// message had shown a `.query` API key that its URL redacted (trial KK).
    static func firstBytes(of response: HTTPResponse, limit: Int = 64) -> String {
        let secrets = response.secretValues
        var head = response
        guard !secrets.isEmpty else {
            head.body = response.body.prefix(limit)
            return quoted(ResponseText.decode(head), cut: response.body.count > limit)
        }
        // Scrubbed before it is cut, so that a secret across the cut leaves none of it.
        let window = limit + 1024
        head.body = response.body.prefix(window)
        var text = ResponseText.decode(head)
        for secret in secrets {
            text = text.replacingOccurrences(of: secret, with: SecretHeaders.placeholder)
        }
        return quoted(
            String(text.prefix(limit)), cut: text.count > limit || response.body.count > window)
    }

    /// `text` quoted, control characters escaped, with `…` before the closing quote when cut.
    private static func quoted(_ text: String, cut: Bool) -> String {
        var quoted = text.debugDescription
        if cut { quoted.insert("…", at: quoted.index(before: quoted.endIndex)) }
        return quoted
    }
}
