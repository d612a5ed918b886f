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
        self.path = path
        self.action = action
        self.code = code
    }

    package var description: String {
        "cannot \(action) \(path): \(String(cString: strerror(code)))"
    }
}
