#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The system calls whose Swift names clash with methods in scope, reached portably.
package enum POSIX {
    /// `write(2)` of every byte of `buffer`, retrying short writes and EINTR. Returns the errno
    /// of a failure, or `nil` when everything was written.
    package static func writeAll(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer) -> Int32? {
        var offset = 0
        while offset < buffer.count {
            #if canImport(Glibc)
                let written = Glibc.write(
                    descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            #else
                let written = Darwin.write(
                    descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            #endif
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += written
        }
        return nil
    }

    /// Closes `descriptor` when it is open (not negative) and marks it closed (-1), so that a
    /// second call does nothing.
    package static func close(_ descriptor: inout Int32) {
        guard descriptor >= 0 else { return }
        #if canImport(Glibc)
            _ = Glibc.close(descriptor)
        #else
            _ = Darwin.close(descriptor)
        #endif
        descriptor = -1
    }

    /// Empties the file open at `descriptor` when it has bytes, instead of opening it with
    /// `O_TRUNC`: ext4 takes a truncation to zero, even of an empty file, as a file being
    /// replaced in place and writes its blocks out when it is closed (`auto_da_alloc`), so a
    /// transport closing a body's file waited on the disk on its event loop. Returns the errno
    /// of a failure, or `nil`.
    package static func emptyIfNeeded(_ descriptor: Int32) -> Int32? {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return errno }
        guard status.st_size > 0 else { return nil }
        return ftruncate(descriptor, 0) == 0 ? nil : errno
    }

    /// `read(2)` into `buffer`: the count read, 0 at end of file, -1 with `errno` set.
    package static func read(_ descriptor: Int32, _ buffer: UnsafeMutableRawBufferPointer) -> Int {
        #if canImport(Glibc)
            Glibc.read(descriptor, buffer.baseAddress, buffer.count)
        #else
            Darwin.read(descriptor, buffer.baseAddress, buffer.count)
        #endif
    }
}
