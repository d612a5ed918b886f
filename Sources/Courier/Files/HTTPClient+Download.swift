import Foundation

extension HTTPClient {
    /// Sends the request and saves a 2xx response's body to `destination` as it arrives, so
    /// that memory stays flat however large the body.
    ///
    /// ```swift
    /// let response = try await client.download(HTTPRequest(url: archiveURL), to: file)
    /// print("saved \(response.bodyCount) bytes")
    /// ```
    /// The body goes to a temporary file beside `destination` (whose folder must exist), which
    /// replaces `destination` whole, `fsync`ed, only when the status is 2xx and every byte came;
    /// then ``HTTPResponse/savedBody`` names `destination`. For any other status `destination`
    /// is left as it was and the body is in ``HTTPResponse/body``, as ``perform(_:)`` gives it.
    /// Failures to write are ``HTTPError`` of kind `.file`. Works through any middleware, and
    /// with clients that ignore ``HTTPRequest/bodyDestination`` (the body is then written
    /// from memory).
    public func download(_ request: HTTPRequest, to destination: URL) async throws -> HTTPResponse {
        let replacement: FileReplacement
        do {
            replacement = try FileReplacement(replacing: destination)
        } catch {
            throw HTTPError(.file, error.description, url: request.displayURL)
        }
        var streamed = request
        streamed.bodyDestination = .file(replacement.temporary)
        do {
            var response = try await perform(streamed)
            guard response.isSuccess else {
                if response.savedBody != nil {
                    response.body = (try? Data(contentsOf: replacement.temporary)) ?? Data()
                    response.savedBody = nil
                }
                replacement.discard()
                return response
            }
            if response.savedBody == nil {
                try replacement.write(response.body)
                response.savedBody = SavedBody(
                    url: replacement.temporary, byteCount: response.body.count)
                response.body = Data()
            }
            try replacement.commit()
            response.savedBody?.url = destination
            return response
        } catch let error as FileError {
            replacement.discard()
            throw HTTPError(.file, error.description, url: request.displayURL)
        } catch {
            replacement.discard()
            throw error
        }
    }
}
