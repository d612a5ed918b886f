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
    /// Stamps the key of the task `task` when its spec asks for one, and returns its write's
    /// digest (``ExpandedTask/Fields/writeDigest``; `nil` for a task that is no write).
    static func identify(_ request: inout HTTPRequest, spec: TaskSpec, job: Job, task: String)
        -> String?
    {
        if let header = spec.writes.keyHeader {
            stamp(&request, header: header, job: job, task: task)
        }
        guard spec.isWrite else { return nil }
        let redactor = Redactor(secrets: job.secrets)
        // The URL's secrets out too: a rotated token in a query is the same write (trial OOO).
        var input = RequestDigest.bytes(of: request, redactor: redactor, scrubbingURL: true)
        // And the headers that tell two writes apart (an `X-Tenant`; trial QQQ: two tenants'
        // charges were one request), less those that carry credentials or the key itself.
        let left: Set<String> = [
            "authorization", "proxy-authorization", "cookie",
            spec.writes.keyHeader?.lowercased() ?? "",
        ]
        let fields = request.headers.filter { field in
            let name = field.name.lowercased()
            return !left.contains(name)
                && !request.secretHeaderNames.contains(where: {
                    $0.lowercased() == name
                })
        }.map { "\($0.name.lowercased()):\(redactor.scrub($0.value))" }.sorted()
        for field in fields {
            input += field.utf8
            input.append(0)
        }
        return String(SHA256.hex(of: input).prefix(32))
    }

    /// Adds the task's key under `header`, unless the request carries that header already (the
    /// job file's own value is sent as written).
    static func stamp(_ request: inout HTTPRequest, header: String, job: Job, task: String) {
        guard !request.headers.contains(header) else { return }
        request.headers[header] = derive(
            job: job.name, task: task, request: request, redactor: Redactor(secrets: job.secrets))
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
