import Courier
import Foundation

/// Where a job lives: the folder its job file names with `home`, or else the job file's own
/// folder. `outputDir` and the default log folder (`logs/`) are taken from it, so that a run, a
/// `--resume` or a `replay --job` started from any working folder reads and writes the same
/// outputs, state and history (docs/job-file.md, "A job's home").
///
/// A job read from standard input has the working folder as its home, unless it names one.
struct JobHome: Sendable, Equatable {
    /// The home as seen from the working folder ("" for the working folder itself), spelled
    /// as the command line and the job file spelled it, so that messages show familiar paths.
    let folder: String

    /// The home of the job file `file` (``JobDecoder/standardInput`` for a job on stdin):
    /// `named` (the job's `home`, absolute or relative to the file's folder) or the file's
    /// folder.
    init(jobFile file: URL, named: String? = nil) {
        let fileFolder =
            file == JobDecoder.standardInput
            ? "" : (file.relativePath as NSString).deletingLastPathComponent
        let base = JobHome(folder: fileFolder)
        let named = named.map { Self.lexicallyNormal(base.resolve($0)) }
        folder = named == "." ? "" : named ?? fileFolder
    }

    /// `path` without `.` components and with each `name/..` pair dropped, for messages that
    /// say `/srv/data`, not `/srv/jobs/../data` (a home named through a symbolic link and `..`
    /// is then the link's parent's sibling, as a shell's `cd` would take it).
    static func lexicallyNormal(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            if part == "." { continue }
            if part == "..", let last = parts.last, last != ".." {
                parts.removeLast()
            } else if part == "..", path.hasPrefix("/") {
                continue
            } else {
                parts.append(part)
            }
        }
        let joined = parts.joined(separator: "/")
        if path.hasPrefix("/") { return "/" + joined }
        return joined.isEmpty ? "." : joined
    }

    /// The working folder as home: what every path was taken from before homes.
    static let workingFolder = JobHome(folder: "")

    private init(folder: String) { self.folder = folder }

    /// `path` as seen from the working folder: unchanged when absolute or when the home is the
    /// working folder, else under the home.
    func resolve(_ path: String) -> String {
        if folder.isEmpty || path.hasPrefix("/") { return path }
        return (folder as NSString).appendingPathComponent(path)
    }

    /// The log folder of the job in `file` (`logs/<name>` in its home), read without
    /// validating the job: commands that read logs take a job file for its logs. `nil` when
    /// the file is no JSON object with a `name`.
    static func logFolder(ofJobFile file: URL) -> URL? {
        guard let bytes = try? FileSystem.read(file, limit: JobDecoder.maximumFileBytes),
            let root = try? JSONParser.parse(bytes), case .object(let members) = root.value,
            case .string(let name)? = members.first(where: { $0.key == "name" })?.node.value
        else { return nil }
        var named: String?
        if case .string(let home)? = members.first(where: { $0.key == "home" })?.node.value,
            !home.isEmpty, !home.contains("${")
        {
            named = home
        }
        return JobHome(jobFile: file, named: named).logs.appendingPathComponent(name)
    }

    /// The default log folder: `logs/` in the home.
    var logs: URL { URL(fileURLWithPath: resolve("logs")) }

    /// Whether this home and the working folder are one folder, however each is spelled.
    var isWorkingFolder: Bool {
        if folder.isEmpty { return true }
        let here = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        return URL(fileURLWithPath: folder).resolvingSymlinksInPath().standardizedFileURL.path
            == here.resolvingSymlinksInPath().standardizedFileURL.path
    }
}
