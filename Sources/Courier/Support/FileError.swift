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
            + (code == EACCES ? Self.ownerHint(path) : "")
    }

    /// Why permission was denied, when it is the common case: the nearest folder of `path`
    /// that exists belongs to another user (a run as root made it, and the job's own user now
    /// cannot write there), with the command that gives it back.
    package static func ownerHint(_ path: String) -> String {
        var folder = path
        var status = stat()
        repeat {
            guard let slash = folder.lastIndex(of: "/") else { return "" }
            folder = slash == folder.startIndex ? "/" : String(folder[..<slash])
        } while stat(folder, &status) != 0 && folder != "/"
        let me = geteuid()
        guard status.st_uid != me, folder != "/" else { return "" }
        let owner = userName(status.st_uid)
        let user = userName(me)
        return
            " (\(folder) belongs to \(owner), and this run is \(user)'s: was it made by a run as \(owner)? `chown -R \(user) \(folder)` gives it back)"
    }

    private static func userName(_ id: uid_t) -> String {
        guard let entry = getpwuid(id), let name = entry.pointee.pw_name else { return "uid \(id)" }
        return String(cString: name)
    }
}
