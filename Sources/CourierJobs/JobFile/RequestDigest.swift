import Courier
import Foundation

/// What identifies a request as the same request again, in bytes: its method, its URL in
/// display form (no userinfo, no secret query values) and its body with the job's secrets
/// taken out (a body file by its size and hash). Both an idempotency key (``IdempotencyKey``)
/// and a recording's entry (`--record`, `--offline`) are made from it, so that a rotated token
/// does not make the same request another, and no digest can be traced back to a secret.
enum RequestDigest {
    /// The request's identifying bytes, each part ended by a NUL. `scrubbingURL`: the URL with
    /// the secrets the redactor knows taken out too, as `<redacted>` however it was encoded (a
    /// recording's: a rehearsal's login answers `<redacted>` for the token it recorded, so a
    /// URL that carries the token must be the same request with either). Idempotency keys and
    /// write digests scrub it too: a rotated secret in a URL is the same write.
    static func bytes(
        of request: HTTPRequest, redactor: Redactor, scrubbingURL: Bool = false
    ) -> [UInt8] {
        var url = request.displayURL.absoluteString
        if scrubbingURL {
            url = redactor.scrub(url)
            for encoded in ["%3Credacted%3E", "%3credacted%3e"] {
                url = url.replacingOccurrences(of: encoded, with: Redactor.placeholder)
            }
        }
        var input: [UInt8] = []
        for part in [request.method.rawValue, url] {
            input += part.utf8
            input.append(0)
        }
        if let body = request.body { input += redactor.scrub(bytes: Array(body)) }
        for part in request.streamedBody?.parts ?? [] {
            switch part {
            case .data(let data): input += redactor.scrub(bytes: Array(data))
            case .file(let url): input += fingerprint(of: url)
            }
        }
        return input
    }

    /// What a write's log lines say it sent (`requestDigest`, ``ExpandedTask/Fields/writeDigest``):
    /// the first 128 bits, in hex, of a SHA-256 of its identifying bytes with the URL's secrets
    /// out too (a rotated token in a query is the same write; trial OOO), and of its headers
    /// that tell two writes apart (an `X-Tenant`; trial QQQ: two tenants' charges were one
    /// request), less those that carry credentials and its idempotency key (`keyHeader`).
    static func write(of request: HTTPRequest, redactor: Redactor, keyHeader: String?) -> String {
        var input = bytes(of: request, redactor: redactor, scrubbingURL: true)
        let key = keyHeader?.lowercased()
        let fields = request.headers.filter { field in
            !request.isSecretHeader(field.name) && field.name.lowercased() != key
        }.map { "\($0.name.lowercased()):\(redactor.scrub($0.value))" }.sorted()
        for field in fields {
            input += field.utf8
            input.append(0)
        }
        return String(SHA256.hex(of: input).prefix(32))
    }

    /// The lowercase hex SHA-256 of `bytes(of:redactor:scrubbingURL:)`.
    static func hex(of request: HTTPRequest, redactor: Redactor, scrubbingURL: Bool = false)
        -> String
    {
        SHA256.hex(of: bytes(of: request, redactor: redactor, scrubbingURL: scrubbingURL))
    }

    /// A file's size and FNV-1a hash of its bytes, read a mebibyte at a time (a body file may
    /// be larger than memory); its path when it cannot be read (the send will say why).
    static func fingerprint(of url: URL) -> [UInt8] {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return Array(url.path.utf8) }
        defer { try? handle.close() }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        var size = 0
        while let chunk = try? handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            hash = FNV1a.hash(chunk, into: hash)
            size += chunk.count
        }
        return Array("\(size):\(hash)".utf8)
    }
}
