import Courier
import Foundation

/// A transport that answers from a recording instead of the network
/// (`courier run JOB --offline DIR`): each request gets the answer recorded for the same
/// request (``RequestDigest``), the first time the first one recorded, then the next (a retry
/// meets what the recorded retry met), and the last again once they are used up. A request the
/// recording lacks fails at once (`invalidRequest`), naming it.
///
/// Everything above it runs as live: retries, redirects, cookies, the rate limit, pages,
/// captures, records, saves.
final class OfflineHTTPClient: HTTPClient, Sendable {
    let folder: URL
    private let answers: [String: [RecordedAnswer]]
    private let served = Locked<[String: Int]>([:])
    private let redactor: Redactor

    /// Reads the recording in `folder`; a cut last line (a recording killed mid-line) is left
    /// out.
    init(folder: URL, redactor: Redactor) throws(RecordingError) {
        self.folder = folder
        self.redactor = redactor
        let url = folder.appendingPathComponent(RecordedAnswer.file)
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw RecordingError(
                "--offline \(folder.path): no recording there (\(RecordedAnswer.file)); make one with courier run JOB --record \(folder.path)"
            )
        }
        var answers: [String: [RecordedAnswer]] = [:]
        for line in Array(data).split(separator: 0x0A) {
            guard let answer = RecordedAnswer(line: line) else { continue }
            answers[answer.request, default: []].append(answer)
        }
        self.answers = answers
    }

    func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
        let digest = RequestDigest.hex(of: request, redactor: redactor, scrubbingURL: true)
        guard let recorded = answers[digest] else {
            throw HTTPError(
                .invalidRequest,
                "not in the recording \(folder.path): \(request.method) \(request.displayURL.absoluteString) (or not with this body); record the job again to rehearse it",
                url: request.displayURL)
        }
        let index = served.withLock { served in
            defer { served[digest, default: 0] += 1 }
            return min(served[digest, default: 0], recorded.count - 1)
        }
        let answer = recorded[index]
        if let failure = answer.error {
            throw HTTPError(
                HTTPError.Kind(rawValue: failure.kind), failure.message, url: request.displayURL)
        }
        let bodyURL = folder.appendingPathComponent("\(RecordedAnswer.bodies)/\(answer.body)")
        guard let body = FileManager.default.contents(atPath: bodyURL.path) else {
            throw HTTPError(
                .file, "the recording lacks the body \(bodyURL.path)", url: request.displayURL)
        }
        var response = HTTPResponse(
            status: answer.status, headers: answer.headerFields, url: request.url,
            requestHeaders: request.headers)
        // The answer the run had came after redirects: said so, from where (the hops are not
        // sent again; the host it came from learns from it, as in the run).
        if let redirected = answer.redirected, let url = URL(string: redirected.url) {
            response.url = url
            response.redirectCount = redirected.hops
        }
        if case .file(let destination) = request.bodyDestination {
            do {
                try body.write(to: destination)
            } catch {
                throw HTTPError(
                    .file, "cannot write \(destination.path): \(error)", url: request.displayURL)
            }
            response.savedBody = SavedBody(url: destination, byteCount: body.count)
        } else {
            response.body = body
        }
        return response
    }
}
