import Foundation

/// A replay's log lines piped in (`replay -`), copied once to a temporary file that every
/// reading of the logs reads: the first line for the settings the night logged, then every
/// line for its history. Read from the pipe, the first reading took all it held, the second
/// found nothing, and `replay - --job JOB < night.jsonl` said "nothing to replay", exit 0
/// (trial MMM). The file is the replay's own, readable by its user alone, and removed when the
/// replay ends.
struct StandardInputSpool {
    /// The copy's path, which stands for `-` among the logs.
    let path: String
    private let folder: URL

    /// Copies standard input to a new file, a mebibyte at a time (a log may be larger than
    /// memory).
    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-replay-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(
            at: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        path = folder.appendingPathComponent("standard-input.jsonl").path
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? output.close() }
        while let chunk = try FileHandle.standardInput.read(upToCount: 1 << 20), !chunk.isEmpty {
            try output.write(contentsOf: chunk)
        }
    }

    /// `logs` with `-` read into a spool; `nil` (with the spool) when no log is `-`.
    static func spooling(_ logs: inout [String]) throws -> StandardInputSpool? {
        guard logs.contains("-") else { return nil }
        let spool = try StandardInputSpool()
        logs = logs.map { $0 == "-" ? spool.path : $0 }
        return spool
    }

    /// `log` as the command line named it: the copy is `-`.
    func named(_ log: String) -> String { log == path ? "-" : log }

    func remove() { try? FileManager.default.removeItem(at: folder) }
}
