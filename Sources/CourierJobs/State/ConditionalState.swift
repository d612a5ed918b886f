import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The validators (`ETag`, `Last-Modified`) of a job's saved outputs, kept in
/// `outputDir/.courier/state` so that the next run can ask "only if changed" (`conditional`).
///
/// The file is JSON, replaced atomically (``OutputFile``), so it is complete whenever it is
/// read, a crash included. Entries recorded since the last write are in the run's journal
/// (``StateJournal``) before the task's `ok` line is logged, and the next run reads them back,
/// so a kill -9 loses none. A file that exists but cannot be read is never replaced nor
/// deleted: `run` and `replay` refuse to start (``refusal(for:)``), and should a run get
/// here all the same, it keeps no state and leaves the file as it is.
final class ConditionalState: Sendable {
    let url: URL
    /// The job's output folder, where the saved files are.
    private let outputDir: String
    private let entries: Locked<[String: SavedValidators]>
    /// Held from a flush's snapshot to its rename, so files are renamed in snapshot order:
    /// the run's once-a-second flusher and its final flush may overlap, and an older snapshot
    /// renamed last replaced the newer file (entries lost, fetched whole again next run).
    private let writing = NSLock()
    /// Entries recorded since the last flush (`nil`: forget the entry): what the next flush
    /// writes. It is the one mark of work to do; a separate "dirty" flag set before the entry
    /// was added let a flush in between clear the flag and leave the entry unwritten.
    private let changes = Locked<[String: SavedValidators?]>([:])
    /// Whether a file was there that could not be read: then nothing is ever written over it.
    private let unreadable: Bool
    /// The run's tag for the state's temporaries (``StaleTemporaries/tag``).
    private let tag: String?
    private let journal: StateJournal
    /// Journals of earlier runs read into this state, removed once it is written.
    private let inherited = Locked<[String]>([])

    /// Where the state of the job whose outputs are in `outputDir` is kept.
    static func location(outputDir: String) -> URL {
        URL(fileURLWithPath: outputDir).appendingPathComponent(".courier/state")
    }

    /// Loads the state of the job whose outputs are in `outputDir`, after removing what a
    /// killed run left in its folder (`.courier/.state.*.tmp`, by `temporaries`' rules); `warn`
    /// hears about a file that exists but cannot be used.
    ///
    /// - Parameters:
    ///   - owner: `whole`, or the shard's tag: whose journals this run may remove.
    ///   - run: this run's id, in its journal's name.
    init(
        outputDir: String, temporaries: StaleTemporaries? = nil, owner: String = "whole",
        run: String = String(UUID().uuidString.prefix(8)), warn: (String) -> Void
    ) {
        url = Self.location(outputDir: outputDir)
        self.outputDir = outputDir
        temporaries?.sweep(url.deletingLastPathComponent())
        tag = temporaries?.tag
        journal = StateJournal(folder: url.deletingLastPathComponent(), owner: owner, run: run)
        switch Self.load(url) {
        case nil:
            entries = Locked([:])
            unreadable = false
        case .success(let values):
            entries = Locked(values)
            unreadable = false
        case .failure(let problem):
            warn(
                "\(url.relativePath): \(problem.reason); starting without validators, and keeping none this run (the file is left as it is)"
            )
            entries = Locked([:])
            unreadable = true
        }
        guard !unreadable else { return }
        // What killed runs recorded after their last write.
        let earlier = StateJournal.read(folder: url.deletingLastPathComponent(), owner: owner)
        guard !earlier.entries.isEmpty || !earlier.removable.isEmpty else { return }
        entries.withLock { values in
            for (save, validators) in earlier.entries { values[save] = validators }
        }
        changes.withLock { changes in
            for (save, validators) in earlier.entries { changes[save] = .some(validators) }
        }
        inherited.withLock { $0 = earlier.removable }
    }

    /// Why a run of `job` must not start: it has `conditional` tasks and their state file
    /// exists but cannot be read, so going on would write a new one over it. `nil` when there
    /// is none, or it reads.
    static func refusal(for job: Job) -> String? {
        guard job.tasks.contains(where: \.conditional) else { return nil }
        let url = location(outputDir: job.outputDir)
        guard case .failure(let problem) = load(url) else { return nil }
        return
            "\(url.relativePath): \(problem.reason); `conditional` keeps its validators there and will not replace it. Move it aside to keep it, or delete it to fetch every conditional output whole once more; nothing was sent"
    }

    /// The saved outputs the state file in `outputDir` keeps validators for; none when it
    /// cannot be read.
    static func savedPaths(outputDir: String) -> [String] {
        guard case .success(let entries)? = load(location(outputDir: outputDir)) else { return [] }
        return entries.keys.sorted()
    }

    /// Why a state file could not be used.
    typealias Unreadable = StateDocument.Unreadable

    /// The entries of the file at `url`; `nil` when there is no file.
    private static func load(_ url: URL) -> Result<[String: SavedValidators], Unreadable>? {
        let kind = "state file"
        switch StateDocument.read(url, kind: kind) {
        case nil: return nil
        case .failure(let problem)?: return .failure(problem)
        case .success(let members)?:
            guard let entries = members.first(where: { $0.key == "entries" })?.node,
                case .object(let saved) = entries.value
            else { return .failure(Unreadable("not a \(kind) courier wrote")) }
            return .success(validators(in: saved))
        }
    }

    /// The validators of each saved output, from the document's `entries`.
    private static func validators(in saved: [(key: String, node: JSONNode)])
        -> [String: SavedValidators]
    {
        var values: [String: SavedValidators] = [:]
        for entry in saved {
            guard case .object(let fields) = entry.node.value else { continue }
            values[entry.key] = SavedValidators(fields: fields)
        }
        return values
    }

    func validators(for save: String) -> HTTPValidators? {
        entries.withLock { $0[save]?.validators }
    }

    /// The validators to ask "only if changed" with for the output saved at `save`: `nil`
    /// when there are none, or the saved file is gone or has changed since they were
    /// recorded (it must be fetched whole: a `304` would keep it as it is now). For a
    /// paginated task's first page, `page` names each page's file: one of the listing's
    /// pages gone since is fetched again, with the whole listing, and so is a listing whose
    /// entry has no page count.
    func conditions(for save: String, page: ((Int) -> String?)? = nil) -> HTTPValidators? {
        let folder = URL(fileURLWithPath: outputDir)
        guard let entry = entries.withLock({ $0[save] }),
            let now = FileStamp.of(folder.appendingPathComponent(save).path)
        else { return nil }
        if entry.unreadable { return nil }
        if let recorded = entry.file, recorded != now { return nil }
        // A listing's entry without its page count (an older state's, or the task's before
        // it paginated) cannot say whether a later page is gone: fetched whole, once
        // (trial M: a deleted page 2 stayed gone behind page 1's 304s).
        if page != nil, entry.pages == nil { return nil }
        if let page, let pages = entry.pages, pages > 1 {
            let recorded = entry.laterPages?.count == pages - 1 ? entry.laterPages : nil
            for number in 2...pages {
                guard let path = page(number),
                    let now = FileStamp.of(folder.appendingPathComponent(path).path)
                else { return nil }
                if let recorded, recorded[number - 2] != now { return nil }
            }
        }
        return entry.validators
    }

    /// Records a paginated task's listing once it was fetched whole, every page saved: its
    /// first page's validators (at `save`, that page's file) and how many pages it has.
    /// Only then: validators recorded with page 1 moved on while later pages could still fail
    /// or be cut, and the next run's 304 kept a listing of mixed or missing pages (trial M).
    /// `page` names each page's file, whose stamps are kept with the count.
    func recordListing(
        _ validators: HTTPValidators, pages: Int, for save: String, page: (Int) -> String?
    ) {
        var entry: SavedValidators?
        if !validators.isEmpty {
            entry = SavedValidators(validators: validators, file: stamp(of: save))
            entry?.pages = pages
            if pages > 1 {
                let stamps = (2...pages).compactMap { page($0).flatMap(stamp(of:)) }
                entry?.laterPages = stamps.count == pages - 1 ? stamps : nil
            }
        }
        store(entry, for: save)
    }

    /// The stamp of the saved file at `save` under the output folder.
    private func stamp(of save: String) -> FileStamp? {
        FileStamp.of(URL(fileURLWithPath: outputDir).appendingPathComponent(save).path)
    }

    /// Records what a 200 said about a saved output (or forgets it when it said nothing), with
    /// the saved file's stamp: called once the file is in place.
    func record(_ response: HTTPResponse, for save: String) {
        let validators = HTTPValidators(response.headers)
        store(
            validators.isEmpty
                ? nil : SavedValidators(validators: validators, file: stamp(of: save)),
            for: save)
    }

    /// Keeps `new` for `save` (`nil` forgets it), in the state and the journal. An entry the
    /// state holds already (the same validators and file stamp) needs no journal line, nor
    /// a write.
    private func store(_ new: SavedValidators?, for save: String) {
        let changed = entries.withLock { values -> Bool in
            guard values[save] != new else { return false }
            values[save] = new
            return true
        }
        guard changed else { return }
        changes.withLock { changes in
            changes[save] = .some(new)
            journal.append(save: save, entry: new)
        }
    }

    /// Writes the file when something changed.
    func flush() throws {
        try writing.withLock { try write() }
    }

    /// Writes this run's changes over what the file holds now, under `.courier/state.lock`:
    /// the shards of a job share the file, and each writing its own whole snapshot lost the
    /// others' entries (their outputs fetched whole again on the next run).
    private func write() throws {
        // Only this method takes changes, and flushes run one at a time (`writing`), so what
        // is seen here is still there below; a change recorded meanwhile joins it.
        let due =
            changes.withLock { !$0.isEmpty } || inherited.withLock { !$0.isEmpty }
        guard due, !unreadable else { return }
        // On an error here the changes stay to write: the once-a-second flush ignores its
        // errors, and the last one must meet this again and say it.
        try FileSystem.makeOwnFolder(url.deletingLastPathComponent())
        let lock = try FileLockGuard(
            url.deletingLastPathComponent().appendingPathComponent("state.lock"))
        defer { withExtendedLifetime(lock) {} }
        // The pending changes and the journal files that hold them, taken together: an entry
        // recorded after this goes to the next journal file and the next write.
        let (pending, journaled) = changes.withLock {
            changes -> ([String: SavedValidators?], [String]) in
            defer { changes = [:] }
            return (changes, journal.rotate())
        }
        do {
            try write(pending)
        } catch {
            // Kept for the next write (an entry recorded since wins); the journals stay too,
            // for the write that succeeds to remove.
            changes.withLock { changes in
                for (save, validators) in pending where changes[save] == nil {
                    changes[save] = validators
                }
            }
            inherited.withLock { $0 += journaled }
            throw error
        }
        // Their entries are in the file now.
        journal.remove(journaled)
        journal.remove(
            inherited.withLock { names in
                defer { names = [] }
                return names
            })
    }

    /// Merges `pending` into the file as it is now and writes it.
    private func write(_ pending: [String: SavedValidators?]) throws {
        guard case .success(var snapshot) = Self.load(url) ?? .success([:]) else { return }
        for (save, validators) in pending { snapshot[save] = validators }
        let document = StateDocument.bytes([
            (
                "entries",
                .object(
                    snapshot.sorted { $0.key < $1.key }.map { save, entry in
                        (save, .object(entry.fields))
                    })
            )
        ])
        try OutputFile.write(Data(document), to: url, tag: tag)
    }
}
