import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A replay's log lines piped in (`replay -`), copied once to a temporary file that every
/// reading of the logs reads: the first line for the settings the night logged, then every
/// line for its history. Read from the pipe, the first reading took all it held, the second
/// found nothing, and `replay - --job JOB < night.jsonl` said "nothing to replay", exit 0
/// (trial MMM).
///
/// The copy is the replay's own, readable by its user alone. On Linux its name is removed as
/// soon as it is made, and it is read through its open descriptor (`/proc/self/fd/N`), so
/// that a replay killed with `kill -9` leaves no copy of the log behind (trial OOO); elsewhere
/// it is removed when the replay ends.
struct StandardInputSpool {
    /// The path the logs' readers open, which stands for `-` among the logs.
    let path: String
    private let folder: URL
    private let descriptor: Int32

    /// Copies standard input to a new file, a mebibyte at a time (a log may be larger than
    /// memory).
    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-replay-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(
            at: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let file = folder.appendingPathComponent("standard-input.jsonl").path
        descriptor = open(file, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let code = errno
            try? FileManager.default.removeItem(at: folder)
            throw CocoaError(
                .fileWriteUnknown,
                userInfo: [
                    NSFilePathErrorKey: file,
                    NSUnderlyingErrorKey: POSIXError(.init(rawValue: code) ?? .EIO),
                ])
        }
        #if os(Linux)
            try? FileManager.default.removeItem(at: folder)
            path = "/proc/self/fd/\(descriptor)"
        #else
            path = file
        #endif
        let output = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false)
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

    /// `text` (a log's path, a message naming it) as the command line named it: the copy is
    /// `-`.
    func named(_ text: String) -> String {
        guard text != path else { return "-" }
        // Followed by what ends a path in a message, not by a digit (`/proc/self/fd/5` in
        // `/proc/self/fd/57`).
        return [":", " ", ",", ";"].reduce(text) {
            $0.replacingOccurrences(of: path + $1, with: "-" + $1)
        }
    }

    func remove() {
        close(descriptor)
        try? FileManager.default.removeItem(at: folder)
    }
}
