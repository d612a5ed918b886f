import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The conditional state's journal: each validator a run records is appended, one line with
/// one `write(2)`, to `outputDir/.courier/journal.OWNER.RUN.N` before the task's `ok` line is
/// logged; the state file itself is rewritten only once a second.
///
/// Without it, a run killed between a save and the next flush left outputs whose validators
/// were nowhere: `--resume` skips those tasks as done, so their validators never came back and
/// the next night fetched them whole. Now the next run of the job reads every journal into the
/// state before it starts, and removes the journals it has folded into a written state file:
/// its own, and those of killed runs that can no longer be writing (of its own shard, or every
/// one when it runs the whole job and so holds the job's lock alone).
final class StateJournal: Sendable {
    /// `.courier/`.
    let folder: URL
    /// `whole` or the shard's tag (`shard-2-of-4`).
    let owner: String
    let run: String
    private let state = Locked<(descriptor: Int32, number: Int, written: [String])>((-1, 0, []))

    init(folder: URL, owner: String, run: String) {
        self.folder = folder
        self.owner = owner
        self.run = run
    }

    deinit {
        let descriptor = state.withLock { $0.descriptor }
        if descriptor >= 0 { close(descriptor) }
    }

    /// Appends one entry (`nil` forgets the save's validators). Best effort: a journal that
    /// cannot be written costs a whole fetch next time, never a run.
    func append(save: String, entry: SavedValidators?) {
        var fields: [(String, JSONWriter.Value)] = [("save", .string(save))]
        fields += entry?.fields ?? [("forget", .bool(true))]
        var line = JSONWriter.bytes(.object(fields))
        line.append(0x0A)
        state.withLock { state in
            if state.descriptor < 0 {
                guard (try? FileSystem.makeOwnFolder(folder)) != nil else { return }
                let name = "journal.\(owner).\(run).\(state.number)"
                state.descriptor = open(
                    folder.appendingPathComponent(name).path,
                    O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0o644)
                guard state.descriptor >= 0 else { return }
                state.written.append(name)
            }
            _ = line.withUnsafeBytes { POSIX.writeAll(state.descriptor, $0) }
        }
    }

    /// Starts a new journal file and returns the names of the ones before it: every entry in
    /// them was recorded before this moment (the caller takes its pending changes under the
    /// same lock as the call, so they are all in the state it writes next).
    func rotate() -> [String] {
        state.withLock { state in
            if state.descriptor >= 0 { close(state.descriptor) }
            state.descriptor = -1
            state.number += 1
            defer { state.written = [] }
            return state.written
        }
    }

    /// Removes journal files (after a state file holding their entries was written).
    func remove(_ names: [String]) {
        for name in names { unlink(folder.appendingPathComponent(name).path) }
    }

    /// Every journal's entries in `folder`, oldest file first (by name within one run, by
    /// modification time across runs), and which of the files this run may remove once their
    /// entries are in a written state: its own shard's, or all of them for the whole job.
    static func read(folder: URL, owner: String) -> (
        entries: [(save: String, entry: SavedValidators?)], removable: [String]
    ) {
        let names =
            ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
            .filter { $0.hasPrefix("journal.") }
        let dated = names.map { name -> (String, Date) in
            let attributes = try? FileManager.default.attributesOfItem(
                atPath: folder.appendingPathComponent(name).path)
            return (name, attributes?[.modificationDate] as? Date ?? .distantPast)
        }.sorted { ($0.1, $0.0) < ($1.1, $1.0) }
        var entries: [(String, SavedValidators?)] = []
        var removable: [String] = []
        for (name, _) in dated {
            guard let bytes = try? FileSystem.read(folder.appendingPathComponent(name)) else {
                continue
            }
            // A killed run may have left half a line last: whole lines only.
            for line in bytes.split(separator: 0x0A) {
                guard let root = try? JSONParser.parse(Array(line)),
                    case .object(let members) = root.value
                else { continue }
                var save: String?
                var forget = false
                for member in members {
                    switch (member.key, member.node.value) {
                    case ("save", .string(let text)): save = text
                    case ("forget", .bool(true)): forget = true
                    default: break
                    }
                }
                guard let save else { continue }
                entries.append((save, forget ? nil : SavedValidators(fields: members)))
            }
            if owner == "whole" || name.hasPrefix("journal.\(owner).") { removable.append(name) }
        }
        return (entries, removable)
    }
}
