import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a ``StreamedBody`` part after part into the buffers a transport hands it: both
/// transports use this one reader, so they send the same bytes and fail the same way.
///
/// The files are measured when the reader is made; a file that then grows or shrinks fails the
/// request with `.file`, since the `Content-Length` already sent would be a lie. One thread at
/// a time uses it (curl's event loop, or the thread spooling for URLSession).
package final class StreamedBodyReader: @unchecked Sendable {
    private enum Piece {
        case data(Data)
        case file(path: String, size: Int)
    }

    private let pieces: [Piece]
    /// Every byte the body has: what `Content-Length` says.
    package let length: Int
    private var index = 0
    private var offset = 0
    private var descriptor: Int32 = -1
    /// Bytes handed out since the start (or the last rewind).
    package private(set) var sent = 0
    /// Why reading stopped, when it failed.
    package private(set) var failure: String?

    /// Measures every file part; a missing or unreadable file throws `.file` naming it.
    package init(_ body: StreamedBody, url: URL) throws(HTTPError) {
        var pieces: [Piece] = []
        var length = 0
        for part in body.parts {
            switch part {
            case .data(let data):
                pieces.append(.data(data))
                length += data.count
            case .file(let file):
                var info = stat()
                guard stat(file.path, &info) == 0 else {
                    throw HTTPError(
                        .file, FileError(path: file.path, action: "read", code: errno).description,
                        url: url)
                }
                guard (info.st_mode & S_IFMT) == S_IFREG else {
                    throw HTTPError(.file, "cannot send \(file.path): not a regular file", url: url)
                }
                pieces.append(.file(path: file.path, size: Int(info.st_size)))
                length += Int(info.st_size)
            }
        }
        self.pieces = pieces
        self.length = length
    }

    deinit { closeFile() }

    /// Fills `buffer` with the next bytes: the count, 0 at the end, or `nil` after a failure.
    package func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        guard failure == nil else { return nil }
        var filled = 0
        while filled < buffer.count, index < pieces.count {
            let target = UnsafeMutableRawBufferPointer(rebasing: buffer[filled...])
            switch pieces[index] {
            case .data(let data):
                let count = min(target.count, data.count - offset)
                data.withUnsafeBytes { bytes in
                    target.copyMemory(
                        from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count]))
                }
                offset += count
                filled += count
                if offset == data.count { advance() }
            case .file(let path, let size):
                if descriptor < 0 {
                    descriptor = open(path, O_RDONLY | O_CLOEXEC)
                    guard descriptor >= 0 else {
                        return fail(FileError(path: path, action: "read", code: errno).description)
                    }
                }
                let wanted = UnsafeMutableRawBufferPointer(
                    rebasing: target[..<min(target.count, max(size - offset, 0) + 1)])
                let count = POSIX.read(descriptor, wanted)
                if count < 0 {
                    if errno == EINTR { continue }
                    return fail(FileError(path: path, action: "read", code: errno).description)
                }
                // One byte more than the measured size is asked for, so growth shows at once.
                guard offset + count <= size else {
                    return fail("\(path) grew while it was being sent")
                }
                if count == 0 {
                    guard offset == size else {
                        return fail("\(path) shrank while it was being sent")
                    }
                    advance()
                    continue
                }
                offset += count
                filled += count
            }
        }
        sent += filled
        return filled
    }

    /// Starts again from the first byte (curl rewinds to resend on a fresh connection).
    package func rewind() {
        closeFile()
        index = 0
        offset = 0
        sent = 0
        failure = nil
    }

    /// The request's error when reading failed.
    package func error(url: URL) -> HTTPError? {
        failure.map { HTTPError(.file, $0, url: url) }
    }

    private func advance() {
        closeFile()
        index += 1
        offset = 0
    }

    private func fail(_ message: String) -> Int? {
        failure = message
        closeFile()
        return nil
    }

    private func closeFile() { POSIX.close(&descriptor) }
}
