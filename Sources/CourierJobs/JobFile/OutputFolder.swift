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
    /// Where no save may land (``OwnPlaces``); `nil`: anywhere inside the folder.
    private let own: OwnPlaces?

    private struct FileIdentity: Equatable {
        let device: UInt64
        let inode: UInt64
    }

    init(_ url: URL, own: OwnPlaces? = nil) {
        self.url = url
        base = url.standardizedFileURL.path
        self.own = own
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
        if plain, let known = verified.withLock({ $0[relativeFolder] }),
            Self.identity(of: folderPath) == known.identity
        {
            // The job file's own folder: not its name (a string made for that folder alone).
            if !known.own.isEmpty,
                known.own.contains(
                    slash.map { String(path[path.utf8.index(after: $0)...]) } ?? path)
            {
                return nil
            }
            // A file's URL outright: without `isDirectory` Foundation would `stat` the path.
            return URL(fileURLWithPath: "\(base)/\(path)", isDirectory: false)
        }
        guard let url = OutputPath.resolve(path, in: url) else { return nil }
        var names: [String] = []
        if let own {
            let folder = OwnPlaces.realPath(of: url.deletingLastPathComponent())
            names = own.names(in: folder)
            guard !own.refuses(folder: folder), !names.contains(url.lastPathComponent) else {
                return nil
            }
        }
        if plain, let identity = Self.identity(of: folderPath) {
            verified.withLock { $0[relativeFolder] = (identity, names) }
        }
        return url
    }

    /// Why `path` was not resolved (``resolve(_:)`` gave `nil`).
    func refusal(of path: String) -> String {
        OutputPath.resolve(path, in: url) == nil
            ? "escapes outputDir"
            : OwnPlaces.refusal
    }

    /// The folder at `path` (links followed), when there is one.
    private static func identity(of path: String) -> FileIdentity? {
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else { return nil }
        return FileIdentity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
    }
}
