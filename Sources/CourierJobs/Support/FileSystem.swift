import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The few file operations the runner needs, on POSIX calls so that every failure is a
/// ``FileError`` and special files (FIFOs) behave as files do.
enum FileSystem {
    /// Creates `url` and its missing parents, like `mkdir -p`.
    static func makeFolders(_ url: URL) throws(FileError) {
        try makeFolders(atPath: url.standardizedFileURL.path)
    }

    /// The folder part of a standardized file path (`/` for a file at the root).
    static func folderPath(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Creates the folder at `path` (standardized: no `.` or `..` components) and its missing
    /// parents, like `mkdir -p` (`0777` less the umask): one `stat` when it is there.
    static func makeFolders(atPath path: String) throws(FileError) {
        var missing: [String] = []
        var current = path
        var status = stat()
        var found = false
        while !current.isEmpty, current != "/" {
            found = stat(current, &status) == 0
            if found { break }
            missing.append(current)
            current = (current as NSString).deletingLastPathComponent
        }
        // The loop's last `stat` read the folder it stopped at; only the root is read again.
        if found || stat(current, &status) == 0, status.st_mode & S_IFMT != S_IFDIR {
            throw FileError(path: current, action: "create a folder inside", code: ENOTDIR)
        }
        for path in missing.reversed() where mkdir(path, 0o777) != 0 && errno != EEXIST {
            throw FileError(path: path, action: "create the folder", code: errno)
        }
    }

    /// Creates `url` like ``makeFolders(_:)``, and refuses it when it is a symbolic link:
    /// `outputDir/.courier` is courier's own, and a link planted there would send the state
    /// and the locks wherever it points.
    static func makeOwnFolder(_ url: URL) throws(FileError) {
        try makeFolders(url)
        var status = stat()
        guard lstat(url.path, &status) == 0 else {
            throw FileError(path: url.path, action: "use the folder", code: errno)
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw FileError(
                path: url.path, action: "use the folder (it is a symbolic link or not a folder)",
                code: ELOOP)
        }
    }

    /// Why `url` is not a regular file courier can read (`nil` when it is one): devices,
    /// FIFOs and folders never end or are not bodies.
    static func notRegularFile(_ url: URL) -> String? {
        var status = stat()
        guard stat(url.path, &status) == 0 else {
            return "cannot read \(url.path): \(String(cString: strerror(errno)))"
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            return
                "\(url.path) is not a regular file (a device, a FIFO or a folder never ends or is no body)"
        }
        guard access(url.path, R_OK) == 0 else {
            return "cannot read \(url.path): \(String(cString: strerror(errno)))"
        }
        return nil
    }

    /// The size of the regular file at `url` (not followed if a symbolic link); `nil` when
    /// there is none.
    static func size(of url: URL) -> Int? {
        var status = stat()
        guard lstat(url.path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            return nil
        }
        return Int(status.st_size)
    }

    /// The whole file. Reads until end of file, so a FIFO works; a folder is refused.
    /// With `limit`, a file (or a FIFO) holding more bytes fails with `EFBIG` after reading at
    /// most `limit + 1` of them.
    static func read(_ url: URL, limit: Int? = nil) throws(FileError) -> [UInt8] {
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileError(path: url.path, action: "read", code: errno) }
        defer { close(descriptor) }
        var status = stat()
        if fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
            throw FileError(path: url.path, action: "read", code: EISDIR)
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { POSIX.read(descriptor, $0) }
            if count < 0 {
                if errno == EINTR { continue }
                throw FileError(path: url.path, action: "read", code: errno)
            }
            if count == 0 { return bytes }
            bytes += chunk[0..<count]
            if let limit, bytes.count > limit {
                throw FileError(path: url.path, action: "read", code: EFBIG)
            }
        }
    }
}
