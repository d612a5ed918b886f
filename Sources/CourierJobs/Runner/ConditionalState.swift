import Courier
import Foundation

/// The validators (`ETag`, `Last-Modified`) of a job's saved outputs, kept in
/// `outputDir/.courier/state` so that the next run can ask "only if changed" (`conditional`).
///
/// The file is JSON, replaced atomically (``OutputFile``), so it is complete whenever it is
/// read, a crash included; at worst the last second's entries are missing and those outputs are
/// fetched whole once more. A file that cannot be read is reported and left alone, never
/// deleted: the run then starts without validators.
final class ConditionalState: Sendable {
    let url: URL
    private let entries: Locked<(values: [String: HTTPValidators], dirty: Bool)>
    /// Held from a flush's snapshot to its rename, so files are renamed in snapshot order:
    /// the run's once-a-second flusher and its final flush may overlap, and an older snapshot
    /// renamed last replaced the newer file (entries lost, fetched whole again next run).
    private let writing = NSLock()

    /// Loads the state of the job whose outputs are in `outputDir`; `warn` hears about a file
    /// that exists but cannot be used.
    init(outputDir: String, warn: (String) -> Void) {
        url = URL(fileURLWithPath: outputDir).appendingPathComponent(".courier/state")
        var values: [String: HTTPValidators] = [:]
        if FileManager.default.fileExists(atPath: url.path) {
            if let bytes = try? FileSystem.read(url), let root = try? JSONParser.parse(bytes),
                case .object(let members) = root.value,
                let entriesNode = members.first(where: { $0.key == "entries" })?.node,
                case .object(let saved) = entriesNode.value
            {
                for entry in saved {
                    guard case .object(let fields) = entry.node.value else { continue }
                    var validators = HTTPValidators()
                    for field in fields {
                        guard case .string(let text) = field.node.value else { continue }
                        if field.key == "etag" { validators.etag = text }
                        if field.key == "lastModified" { validators.lastModified = text }
                    }
                    values[entry.key] = validators
                }
            } else {
                warn(
                    "\(url.relativePath): not a state file courier can read; starting without validators (the file is left as it is)"
                )
            }
        }
        entries = Locked((values, false))
    }

    func validators(for save: String) -> HTTPValidators? {
        entries.withLock { $0.values[save] }
    }

    /// Records what a 200 said about a saved output (or forgets it when it said nothing).
    func record(_ response: HTTPResponse, for save: String) {
        let validators = HTTPValidators(response.headers)
        entries.withLock { state in
            let new = validators.isEmpty ? nil : validators
            guard state.values[save] != new else { return }
            state.values[save] = new
            state.dirty = true
        }
    }

    /// Writes the file when something changed.
    func flush() throws {
        try writing.withLock { try write() }
    }

    private func write() throws {
        let snapshot = entries.withLock { state -> [String: HTTPValidators]? in
            guard state.dirty else { return nil }
            state.dirty = false
            return state.values
        }
        guard let snapshot else { return }
        let value = JSONWriter.Value.object([
            ("version", .int(1)),
            (
                "entries",
                .object(
                    snapshot.sorted { $0.key < $1.key }.map { save, validators in
                        var fields: [(String, JSONWriter.Value)] = []
                        if let etag = validators.etag { fields.append(("etag", .string(etag))) }
                        if let date = validators.lastModified {
                            fields.append(("lastModified", .string(date)))
                        }
                        return (save, .object(fields))
                    })
            ),
        ])
        try OutputFile.write(Data(JSONWriter.bytes(value)), to: url)
    }
}
