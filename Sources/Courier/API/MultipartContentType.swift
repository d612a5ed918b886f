import Foundation

/// Keeps a multipart form's boundary in its `Content-Type` when the caller names the type.
///
/// A caller who writes `Content-Type: multipart/form-data` beside a ``MultipartFormData``
/// body means the form's type: sent without the boundary, the server cannot find a single
/// part. So a multipart type with no boundary gets the form's, the same boundary is kept, and
/// another boundary is refused (the body would not match it). A non-multipart type is the
/// caller's choice and is sent as given.
enum MultipartContentType {
    static func reconcile(_ headers: inout HTTPHeaders, with form: MultipartFormData)
        throws(APIError)
    {
        guard let given = headers["Content-Type"] else { return }
        let parts = given.split(separator: ";", omittingEmptySubsequences: false)
        let type = parts[0].trimmingCharacters(in: .whitespaces).lowercased()
        guard type.hasPrefix("multipart/") else { return }
        let boundary = parts.dropFirst().lazy.compactMap { parameter -> String? in
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2,
                pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "boundary"
            else { return nil }
            var value = pair[1].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())
            }
            return value
        }.first
        switch boundary {
        case nil:
            headers.replaceOrAdd("Content-Type", given + "; boundary=\(form.boundary)")
        case form.boundary:
            return
        case let other?:
            throw APIError(
                .invalidRequest,
                "the Content-Type header names the boundary \"\(other)\" but the form's is "
                    + "\"\(form.boundary)\"; leave the boundary out and the form's is used")
        }
    }
}
