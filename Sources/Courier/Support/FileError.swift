#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A file-system failure said in words: what was being done, to which path, and why
/// (`cannot create the folder logs/nightly: Permission denied`), never a Foundation error code.
package struct FileError: Error, CustomStringConvertible {
    package let path: String
    /// What was being done, as a verb phrase: "read", "create the folder".
    package let action: String
    /// The `errno` value.
    package let code: Int32

    package init(path: String, action: String, code: Int32) {
        self.path = Self.shown(path)
        self.action = action
        self.code = code
    }

    /// The path as the user knows it: a file named through an open folder
    /// (`/proc/self/fd/N/name`, as a streamed save's temporary is) is named by that folder's
    /// path, read while the folder is still open (the error is made as the step fails).
    static func shown(_ path: String) -> String {
        let prefix = "/proc/self/fd/"
        guard path.hasPrefix(prefix) else { return path }
        let rest = path.dropFirst(prefix.utf8.count)
        guard let slash = rest.firstIndex(of: "/"), Int32(rest[..<slash]) != nil else {
            return path
        }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(String(path[..<slash]), &buffer, Int(PATH_MAX))
        guard count > 0 else { return path }
        let folder = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return folder + rest[slash...]
    }

    package var description: String {
        "cannot \(action) \(path): \(String(cString: strerror(code)))"
    }
}
