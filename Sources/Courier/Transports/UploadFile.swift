import Foundation

/// The one file URLSession uploads a ``StreamedBody`` from: the body's own file when it is
/// exactly one file, otherwise a temporary file the parts are copied into in chunks (memory
/// stays flat; the disk holds the body once more until the request ends).
struct UploadFile {
    let url: URL
    /// The body's length in bytes.
    let length: Int
    private let temporary: Bool

    /// The file to upload `body` from. Copying parts into a temporary file can take seconds
    /// for a large form, so it runs on a thread of its own, never on the cooperative pool.
    static func prepare(_ body: StreamedBody, url: URL) async throws -> UploadFile {
        if body.onlyFile != nil { return try UploadFile(body, url: url) }
        return try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try UploadFile(body, url: url) })
            }
        }
    }

    private init(_ body: StreamedBody, url requestURL: URL) throws(HTTPError) {
        let reader = try StreamedBodyReader(body, url: requestURL)
        length = reader.length
        if let file = body.onlyFile {
            url = file
            temporary = false
            return
        }
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-upload-\(UUID().uuidString)")
        temporary = true
        let writer: BodyFileWriter
        do {
            writer = try BodyFileWriter(url: url)
        } catch {
            throw HTTPError(.file, error.description, url: requestURL)
        }
        defer { writer.close() }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 1)
        defer { buffer.deallocate() }
        while true {
            guard let count = reader.read(into: buffer) else {
                remove()
                throw reader.error(url: requestURL)
                    ?? HTTPError(.file, "the body could not be read", url: requestURL)
            }
            if count == 0 { break }
            guard writer.write(UnsafeRawBufferPointer(rebasing: buffer[..<count])) else {
                remove()
                throw writer.error(url: requestURL)
                    ?? HTTPError(.file, "the body could not be staged", url: requestURL)
            }
        }
    }

    /// Deletes the temporary copy; the caller's own file is never touched.
    func remove() {
        if temporary { try? FileManager.default.removeItem(at: url) }
    }
}
