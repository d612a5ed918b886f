import Courier
import Foundation

/// The files this run saved, by task: a second task's save to a file another task of the
/// run saved fails, rather than replace its answer (trial LLL: a literal `o/x.json` beside a
/// fan-out's `o/{i}.json` whose capture yielded `x` ran `4 ok`, one answer lost). Paths that
/// values name are known only as the run goes; validation judges what it can see
/// (``SaveCollisions``). Kept only for a job with two entries that save or more (one entry's
/// tasks never share a file: validation sees to that), each file as a 64-bit hash with its
/// task's. A repair (resume, replay, `--task` run) starts with the files the runs it completes
/// saved: its tasks are that night's too (a resume's fan-out child had replaced the night's
/// literal save).
final class SavedPaths: Sendable {
    private let claims: Locked<[UInt64: UInt64]>
    /// Each folder a save went to, as written, and where it is with its links resolved.
    private let folders = Locked<[String: String]>([:])
    private let outputDir: String
    let enabled: Bool

    /// - Parameter earlier: the files the runs this one completes saved (`savedTo`, as
    ///   logged), each with its task (``RunHistory/saved``).
    init(job: Job, earlier: [String: String] = [:]) {
        enabled = job.tasks.filter { $0.save != nil }.count >= 2
        outputDir = job.outputDir
        claims = Locked([:])
        guard enabled else { return }
        for (file, task) in earlier {
            guard let path = Self.underOutput(file, outputDir: job.outputDir) else { continue }
            let file = key(path)
            claims.withLock { $0[file] = FNV1a.hash(task.utf8) }
        }
    }

    /// Whether `task` may save `path` (under `outputDir`, as logged): no other task of this
    /// run, or of the runs it completes, saved it. The first task to save a path keeps it.
    func claim(_ path: String, task: String) -> Bool {
        guard enabled else { return true }
        let file = key(path)
        let owner = FNV1a.hash(task.utf8)
        return claims.withLock { claims in
            if let earlier = claims[file] { return earlier == owner }
            claims[file] = owner
            return true
        }
    }

    /// The file `path` (under `outputDir`) names, as a hash of where it is: its folder's
    /// deepest existing part with its links resolved, and the rest as written, so that two
    /// spellings of one file through a link inside `outputDir` are one (trial WWW:
    /// `lk/7.json`, `lk` a link to `items`, replaced the answer `items/7.json` held), and a
    /// folder made after a first save is where it was.
    private func key(_ path: String) -> UInt64 {
        let canonical = RecordsRule.canonical(path)
        let name = (canonical as NSString).lastPathComponent
        let written = (canonical as NSString).deletingLastPathComponent
        let folder =
            folders.withLock { $0[written] }
            ?? {
                let full = (outputDir as NSString).appendingPathComponent(written)
                let real = OwnPlaces.realPath(of: URL(fileURLWithPath: full))
                folders.withLock { $0[written] = real }
                return real
            }()
        return FNV1a.hash("\(folder)/\(name)".utf8)
    }

    /// `file` (a logged `savedTo`: `outputDir/path`) as its path under `outputDir`, whichever
    /// working folder each was spelled from; `nil` when it is not under it (the job's
    /// `outputDir` changed since).
    static func underOutput(_ file: String, outputDir: String) -> String? {
        let here = FileManager.default.currentDirectoryPath
        let absolute = { (path: String) in
            URL(fileURLWithPath: path.hasPrefix("/") ? path : "\(here)/\(path)")
                .standardizedFileURL.path
        }
        let folder = absolute(outputDir)
        let whole = absolute(file)
        guard whole.hasPrefix(folder + "/") else { return nil }
        return String(whole.dropFirst(folder.count + 1))
    }
}
