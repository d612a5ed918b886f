import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A run's output folder, for the many ``OutputPath/resolve(_:in:)`` calls of its saves.
///
/// Resolving a path in full (standardizing it, resolving the symbolic links of the folder and
/// of the deepest folder that exists) took about 45 µs of a curl loop's time for every save. A
/// folder it has found inside the output folder is remembered with its device and inode: a
/// later save into it needs one `stat` of the folder's path, which must lead to that same
/// folder still (a folder has one place: a link planted in its stead, or the folder moved,
/// leads elsewhere, and the path is resolved in full again).
final class OutputFolder: Sendable {
    /// The folder, as the job gives it.
    let url: URL
    /// Its path, standardized as ``OutputPath/resolve(_:in:)`` standardizes it.
    private let base: String
    /// Folders under ``url`` (by their path relative to it) found inside it, by identity, with
    /// the names of the job's own files in each (the job file's, in its folder).
    private let verified = Locked<[String: (identity: FileIdentity, own: [String])]>([:])
    /// The job's own places, their folders' links resolved: the job file (as named, and as
    /// its link leads) and the run's log folder. A save through a link to their folder
    /// replaced the job file, or wrote into the history (trial MMM), where ``OwnFiles``
    /// checks the path as written only.
    private let ownFiles: [(folder: String, name: String)]
    private let logFolder: String?

    private struct FileIdentity: Equatable {
        let device: UInt64
        let inode: UInt64
    }

    /// - Parameters:
    ///   - jobFile: the job file (`nil`: none, a job read from standard input).
    ///   - logs: the folder the run logs in (`nil`: none).
    init(_ url: URL, jobFile: URL? = nil, logs: URL? = nil) {
        self.url = url
        base = url.standardizedFileURL.path
        ownFiles = [jobFile, jobFile?.resolvingSymlinksInPath()].compactMap { $0 }.map {
            (Self.realPath(of: $0.deletingLastPathComponent()), $0.lastPathComponent)
        }
        logFolder = logs.map { Self.realPath(of: $0) }
    }

    /// The file URL for `path` (relative to the folder), or `nil` when it would escape.
    func resolve(_ path: String) -> URL? {
        let bytes = path.utf8
        let slash = bytes.lastIndex(of: UInt8(ascii: "/"))
        let relativeFolder = slash.map { String(path[..<$0]) } ?? ""
        // Only a plain path (no `.` component, no `//`) reads the same before and after
        // standardizing; any other takes the full way every time.
        let plain =
            OutputPath.problem(with: path) == nil
            && !path.split(separator: "/", omittingEmptySubsequences: false).contains {
                $0.isEmpty || $0 == "."
            }
        let folderPath = relativeFolder.isEmpty ? base : "\(base)/\(relativeFolder)"
        let name = slash.map { String(path[path.utf8.index(after: $0)...]) } ?? path
        if plain, let known = verified.withLock({ $0[relativeFolder] }),
            Self.identity(of: folderPath) == known.identity
        {
            guard !known.own.contains(name) else { return nil }
            // A file's URL outright: without `isDirectory` Foundation would `stat` the path.
            return URL(fileURLWithPath: "\(base)/\(path)", isDirectory: false)
        }
        guard let url = OutputPath.resolve(path, in: url) else { return nil }
        let folder = Self.realPath(of: url.deletingLastPathComponent())
        if let logFolder, folder == logFolder || folder.hasPrefix(logFolder + "/") {
            return nil
        }
        let own = ownFiles.filter { $0.folder == folder }.map(\.name)
        guard !own.contains(url.lastPathComponent) else { return nil }
        if plain, let identity = Self.identity(of: folderPath) {
            verified.withLock { $0[relativeFolder] = (identity, own) }
        }
        return url
    }

    /// Why `path` was not resolved (``resolve(_:)`` gave `nil`).
    func refusal(of path: String) -> String {
        OutputPath.resolve(path, in: url) == nil
            ? "escapes outputDir"
            : "leads through a symbolic link to the job's own file or log folder, which no output may replace"
    }

    /// `url` with the links of its deepest folder that exists resolved, the rest as written.
    private static func realPath(of url: URL) -> String {
        var existing = url.standardizedFileURL
        var rest: [String] = []
        while !FileManager.default.fileExists(atPath: existing.path),
            existing.pathComponents.count > 1
        {
            rest.insert(existing.lastPathComponent, at: 0)
            existing.deleteLastPathComponent()
        }
        return ([existing.resolvingSymlinksInPath().path] + rest).joined(separator: "/")
    }

    /// The folder at `path` (links followed), when there is one.
    private static func identity(of path: String) -> FileIdentity? {
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else { return nil }
        return FileIdentity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
    }
}
