import Courier
import Foundation

/// The idempotency key a task asks for (`idempotencyKey`): derived from the job, the task's id
/// and its request, so that every retry, `--resume` and `replay --job` sends the same write
/// with the same key, and a changed write (another URL or body) gets a new one.
///
/// The secrets the job knows (`${env:…}` values, credentials) are taken out of the body and of
/// the URL before it is hashed, and the URL is its display form (no userinfo, no secret query
/// values): a rotated token does not make the same write a new one, and no key can be traced
/// back to a secret. Headers are left out: they carry credentials, and the key itself. (Until
/// the twenty-sixth session a secret in the URL's path or an unmarked query value went into
/// the key, and a rotated one made the night's write another; trial OOO.)
enum IdempotencyKey {
    /// Stamps the key of the task `task` when its spec asks for one (a key the job file sets in
    /// `headers` is sent as written), and returns its write's digest
    /// (``RequestDigest/write(of:redactor:keyHeader:)``; `nil` for a task that is no write).
    static func identify(_ request: inout HTTPRequest, spec: TaskSpec, job: Job, task: String)
        -> String?
    {
        // Most tasks read: no key, no digest, no redactor made for them.
        guard spec.isWrite || spec.writes.keyHeader != nil else { return nil }
        let redactor = Redactor(secrets: job.secrets)
        if let header = spec.writes.keyHeader, !request.headers.contains(header) {
            request.headers[header] = derive(
                job: job.name, task: task, request: request, redactor: redactor)
        }
        guard spec.isWrite else { return nil }
        return RequestDigest.write(
            of: request, redactor: redactor, keyHeader: spec.writes.keyHeader)
    }

    /// The key, shaped as a UUID (version 8, RFC 9562 §5.8: its bits are the first 128 of a
    /// SHA-256), which is what most APIs that take a key expect.
    static func derive(job: String, task: String, request: HTTPRequest, redactor: Redactor)
        -> String
    {
        var input = Array("courier idempotency key 1".utf8)
        for part in [job, task] {
            input.append(0)
            input += part.utf8
        }
        input.append(0)
        input += RequestDigest.bytes(of: request, redactor: redactor, scrubbingURL: true)
        var bytes = Array(SHA256.digest(input).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x80
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex = bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        var key = ""
        for (index, character) in hex.enumerated() {
            if [8, 12, 16, 20].contains(index) { key.append("-") }
            key.append(character)
        }
        return key
    }
}
