import Courier
import Foundation

/// The idempotency key a task asks for (`idempotencyKey`): derived from the job, the task's id
/// and its request, so that every retry, `--resume` and `replay --job` sends the same write
/// with the same key, and a changed write (another URL or body) gets a new one.
///
/// The secrets the job knows (`${env:…}` values, credentials) are taken out of the body before
/// it is hashed, and the URL is its display form (no userinfo, no secret query values): a
/// rotated token does not make the same write a new one, and no key can be traced back to a
/// secret. Headers are left out: they carry credentials, and the key itself.
enum IdempotencyKey {
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
        for part in [job, task, request.method.rawValue, request.displayURL.absoluteString] {
            input.append(0)
            input += part.utf8
        }
        input.append(0)
        if let body = request.body { input += redactor.scrub(bytes: Array(body)) }
        for part in request.streamedBody?.parts ?? [] {
            switch part {
            case .data(let data): input += redactor.scrub(bytes: Array(data))
            case .file(let url): input += fingerprint(of: url)
            }
        }
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
