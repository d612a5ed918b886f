import Foundation

/// Where no output may land, with the links of their folders resolved: the job file (as named,
/// and where its link leads), the run's log folder and courier's own folder under `outputDir`
/// (`.courier`: the state, cursors, locks and kept captures). ``OwnFiles`` and the `.courier`
/// rule check a path as it is written; this checks where a write lands, so that a `save` or a
/// records file reached through a symbolic link to their folder (`lk -> .`, an `outputDir`
/// that is a link) neither replaces the job file nor writes into the history or over the
/// state (trials MMM, OOO: each did, and the next run could not start).
struct OwnPlaces: Sendable {
    private let files: [Place]
    private let folders: [String]

    private struct Place: Sendable {
        let folder: String
        let name: String
    }

    /// What a refused write is told.
    static let refusal =
        "lands on the job file, in its log folder or in courier's own folder (.courier), which no output may replace"

    /// - Parameters:
    ///   - jobFile: the job file (`nil`: none, a job read from standard input).
    ///   - logs: the folder the run logs in (`nil`: none).
    init(jobFile: URL?, logs: URL?, outputDir: URL) {
        files = [jobFile, jobFile?.resolvingSymlinksInPath()].compactMap { $0 }.map {
            Place(
                folder: Self.realPath(of: $0.deletingLastPathComponent()),
                name: $0.lastPathComponent)
        }
        folders = [logs, outputDir.appendingPathComponent(".courier")].compactMap { $0 }.map {
            Self.realPath(of: $0)
        }
    }

    /// Whether a write into `folder` (its links resolved, ``realPath(of:)``) lands in the log
    /// folder or `.courier`, or in one of their folders.
    func refuses(folder: String) -> Bool {
        folders.contains { folder == $0 || folder.hasPrefix($0 + "/") }
    }

    /// The names of the job's own files in `folder` (its links resolved).
    func names(in folder: String) -> [String] {
        files.filter { $0.folder == folder }.map(\.name)
    }

    /// Whether a write to `url` (its folder's links resolved or not) lands on an own place.
    func refuses(_ url: URL) -> Bool {
        let folder = Self.realPath(of: url.deletingLastPathComponent())
        return refuses(folder: folder) || names(in: folder).contains(url.lastPathComponent)
    }

    /// `url` with the links of its deepest folder that exists resolved, the rest as written.
    static func realPath(of url: URL) -> String {
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
}
