import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whether a new version of a file, still in its temporary, holds the very bytes of the file it
/// would replace: a run that changed nothing then leaves the file as it was, its time of last
/// change too, so that what watches it (a backup, `make`, `rsync`) sees no change.
enum SameBytes {
    /// Whether the open file `descriptor` holds what the regular file at `path` holds. Any
    /// error reads as "not the same": the caller then replaces the file, as it would have.
    /// Blocking.
    static func file(_ descriptor: Int32, equalsFileAt path: String) -> Bool {
        var new = stat()
        var old = stat()
        guard fstat(descriptor, &new) == 0, lstat(path, &old) == 0,
            old.st_mode & S_IFMT == S_IFREG, new.st_size == old.st_size
        else { return false }
        let existing = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard existing >= 0 else { return false }
        defer { close(existing) }
        let chunk = 1 << 16
        var left = [UInt8](repeating: 0, count: chunk)
        var right = [UInt8](repeating: 0, count: chunk)
        var offset: off_t = 0
        while offset < new.st_size {
            let want = min(chunk, Int(new.st_size - offset))
            guard read(descriptor, at: offset, count: want, into: &left),
                read(existing, at: offset, count: want, into: &right),
                left.prefix(want) == right.prefix(want)
            else { return false }
            offset += off_t(want)
        }
        return true
    }

    /// Reads exactly `count` bytes at `offset` into `buffer`; whether it could.
    private static func read(
        _ descriptor: Int32, at offset: off_t, count: Int, into buffer: inout [UInt8]
    ) -> Bool {
        var done = 0
        while done < count {
            let got = buffer.withUnsafeMutableBytes {
                pread(descriptor, $0.baseAddress! + done, count - done, offset + off_t(done))
            }
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { return false }
            done += got
        }
        return true
    }
}
