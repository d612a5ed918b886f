import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The file a transport writes a response body into as it arrives
/// (``ResponseBodyDestination/file(_:)``): both transports use this one writer, so that they
/// create, fill and fail the same way.
///
/// One thread writes (curl's event loop, or URLSession's serial delegate queue), but another may
/// close it: URLSession's deadline ends a transfer from outside while the delegate queue may be
/// mid-write, and a descriptor closed under a write could be reused by another file. So a
/// write and the close exclude each other (one uncontended lock per chunk), and nothing is
/// written once the file is closed.
package final class BodyFileWriter: @unchecked Sendable {
    package let url: URL
    private let lock = NSLock()
    private var descriptor: Int32
    /// Bytes written so far.
    package private(set) var byteCount = 0
    /// The first write that failed; nothing is written after it.
    package private(set) var failure: FileError?

    /// Creates or truncates the file. A symbolic link in its place is refused (`O_NOFOLLOW`),
    /// so a body is never written through a link someone else planted.
    ///
    /// A file that is there (a ``FileReplacement``'s temporary, made before the request) is
    /// opened without `O_CREAT`: an open that may create takes its folder's lock exclusively,
    /// and many transfers saving into one folder then spun on that lock in the kernel.
    ///
    /// A file with bytes in it (a retry's) is emptied, never opened with `O_TRUNC`
    /// (``POSIX/emptyIfNeeded(_:)`` says why).
    package init(url: URL) throws(FileError) {
        self.url = url
        descriptor = open(url.path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
        if descriptor < 0, errno == ENOENT {
            descriptor = open(url.path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o666)
        }
        guard descriptor >= 0 else {
            throw FileError(path: url.path, action: "create", code: errno)
        }
        if let code = POSIX.emptyIfNeeded(descriptor) {
            POSIX.close(&descriptor)
            throw FileError(path: url.path, action: "empty", code: code)
        }
    }

    deinit { close() }

    /// Appends `bytes`; false once a write has failed.
    package func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard failure == nil, descriptor >= 0 else { return false }
        if let code = POSIX.writeAll(descriptor, bytes) {
            failure = FileError(path: url.path, action: "write", code: code)
            return false
        }
        byteCount += bytes.count
        return true
    }

    /// Closes the file, after a write in progress on another thread; later writes and closes
    /// do nothing.
    package func close() {
        lock.lock()
        defer { lock.unlock() }
        POSIX.close(&descriptor)
    }

    /// The transfer's error when a write failed, for `request`'s URL.
    package func error(url requestURL: URL) -> HTTPError? {
        failure.map { HTTPError(.file, $0.description, url: requestURL) }
    }

    /// What the response reports about the body.
    package var saved: SavedBody { SavedBody(url: url, byteCount: byteCount) }

    /// Opens the file a request asks for, or says why not as an ``HTTPError`` of kind `.file`.
    package static func opening(for request: HTTPRequest) throws(HTTPError) -> BodyFileWriter? {
        guard case .file(let url) = request.bodyDestination else { return nil }
        do {
            return try BodyFileWriter(url: url)
        } catch {
            throw HTTPError(.file, error.description, url: request.displayURL)
        }
    }
}
