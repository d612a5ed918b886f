import Courier
import Foundation

/// The job's cursor file, `outputDir/.courier/since`, as it is read: task id → cursor. Read
/// here, below the run, because a job's `window` tasks leave out the windows it holds as done
/// when the file is read (``SinceState`` keeps and writes it during a run).
enum CursorFile {
    /// Where the cursors of the job whose outputs are in `outputDir` are kept.
    static func location(outputDir: String) -> URL {
        URL(fileURLWithPath: outputDir).appendingPathComponent(".courier/since")
    }

    /// The file's cursors: none when it does not exist; why not when it cannot be read.
    static func load(_ url: URL) -> Result<[String: String], StateDocument.Unreadable> {
        let kind = "cursor file"
        let members: StateDocument.Members
        switch StateDocument.read(url, kind: kind) {
        case nil: return .success([:])
        case .failure(let problem)?: return .failure(problem)
        case .success(let read)?: members = read
        }
        guard let cursors = members.first(where: { $0.key == "cursors" }),
            case .object(let entries) = cursors.node.value
        else { return .failure(StateDocument.Unreadable("not a \(kind) courier wrote")) }
        var found: [String: String] = [:]
        for entry in entries {
            guard case .string(let value) = entry.node.value else {
                return .failure(StateDocument.Unreadable("not a \(kind) courier wrote"))
            }
            found[entry.key] = value
        }
        return .success(found)
    }
}
