import Courier
import Foundation

/// Where a paginated task's listing stood after its last good page that led to another: what
/// `--resume` and `replay --job` need to go on from the page after it instead of from page 1
/// (a 500-page listing killed on page 480 fetches 20 pages, not 500).
///
/// Kept in `outputDir/.courier/listings/KEY` (KEY: the task's key, ``FNV1a/taskKey(job:task:)``,
/// 16 hex digits), one ``StateDocument`` per task, replaced atomically after each such page,
/// once the page's save is in place, its line logged and its records on disk in the task's
/// listing file (``RecordsPart``). Removed once the task ends `ok`.
struct ListingCheckpoint: Sendable, Equatable {
    /// The task's id.
    var task: String
    /// The run that wrote it, whose listing file holds the records.
    var run: String
    /// The task's first request and its records settings, hashed (``fingerprint(of:records:)``):
    /// a job whose task now asks for something else, or keeps its records otherwise (another
    /// file, `from`, `write`, key or shaping), starts it at page 1 again.
    var first: String
    /// The pages done and the next one's request (``Paginator/Checkpoint``).
    var pages: Paginator.Checkpoint
    /// The task's `since` value after those pages (the greatest seen), if it has one.
    var since: String?
    /// The records of those pages, when the task keeps records.
    var records: Records?

    /// The pages' records (``ListingRecords``).
    typealias Records = ListingRecords

    static let kind = "listing checkpoint"

    /// The document's bytes (``StateDocument``).
    var bytes: [UInt8] {
        var members: [(String, JSONWriter.Value)] = [
            ("task", .string(task)), ("run", .string(run)), ("first", .string(first)),
            ("pages", .int(pages.pages)), ("itemsSeen", .int(pages.itemsSeen)),
            ("step", .string(pages.step)),
        ]
        if let since { members.append(("since", .string(since))) }
        if let records {
            members.append(
                (
                    "records",
                    .object([
                        ("file", .string(records.file)), ("bytes", .int(records.bytes)),
                        ("count", .int(records.count)), ("hash", .string(records.hash)),
                    ])
                ))
        }
        return StateDocument.bytes(members)
    }

    /// The checkpoint in `members`; `nil` when a member is missing or of another type.
    init?(_ members: StateDocument.Members) {
        func string(_ key: String, in members: StateDocument.Members) -> String? {
            guard case .string(let text)? = members.first(where: { $0.key == key })?.node.value
            else { return nil }
            return text
        }
        func int(_ key: String, in members: StateDocument.Members) -> Int? {
            guard case .number(let number)? = members.first(where: { $0.key == key })?.node.value
            else { return nil }
            return Int(exactly: number)
        }
        guard let task = string("task", in: members), let run = string("run", in: members),
            let first = string("first", in: members), let pages = int("pages", in: members),
            let itemsSeen = int("itemsSeen", in: members), let step = string("step", in: members),
            pages >= 1
        else { return nil }
        var records: Records?
        if let node = members.first(where: { $0.key == "records" })?.node {
            guard case .object(let fields) = node.value,
                let file = string("file", in: fields), let bytes = int("bytes", in: fields),
                let count = int("count", in: fields), let hash = string("hash", in: fields),
                Self.isListingPath(file), bytes >= 0, count >= 0
            else { return nil }
            records = Records(file: file, bytes: bytes, count: count, hash: hash)
        }
        self.init(
            task: task, run: run, first: first,
            pages: Paginator.Checkpoint(pages: pages, itemsSeen: itemsSeen, step: step),
            since: string("since", in: members), records: records)
    }

    init(
        task: String, run: String, first: String, pages: Paginator.Checkpoint, since: String?,
        records: Records?
    ) {
        self.task = task
        self.run = run
        self.first = first
        self.pages = pages
        self.since = since
        self.records = records
    }

    /// Whether `file` is a listing file's path under `.courier/records`: a folder and a name,
    /// neither hidden nor `..`, nothing else (a checkpoint never names a file elsewhere).
    static func isListingPath(_ file: String) -> Bool {
        let parts = file.split(separator: "/", omittingEmptySubsequences: false)
        return parts.count == 2
            && parts.allSatisfy { !$0.isEmpty && !$0.hasPrefix(".") }
            && file.hasSuffix(".listing")
    }

    /// The hash of a task's first request (its method, URL and body) and of where and how it
    /// keeps its records, if it does.
    static func fingerprint(of request: HTTPRequest, records: RecordsTarget?) -> String {
        var hash = FNV1a.hash(request.method.rawValue.utf8)
        hash = FNV1a.hash([0], into: hash)
        hash = FNV1a.hash(request.url.absoluteString.utf8, into: hash)
        hash = FNV1a.hash([0], into: hash)
        if let body = request.body { hash = FNV1a.hash(body, into: hash) }
        if let records {
            for field in [records.path, records.rule.from, records.rule.settings] {
                hash = FNV1a.hash([0], into: hash)
                hash = FNV1a.hash(field.utf8, into: hash)
            }
        }
        return RecordsStore.hex(hash)
    }
}

/// A job's listing checkpoints (``ListingCheckpoint``), under `outputDir/.courier/listings/`.
struct ListingCheckpoints: Sendable {
    let folder: URL
    let job: String

    init(outputDir: String, job: String) {
        folder = URL(fileURLWithPath: outputDir).appendingPathComponent(".courier/listings")
        self.job = job
    }

    func url(for task: String) -> URL {
        folder.appendingPathComponent(RecordsStore.hex(FNV1a.taskKey(job: job, task: task)))
    }

    /// Task `task`'s checkpoint: `nil` when there is none; why not when it cannot be read.
    func read(task: String) -> Result<ListingCheckpoint, StateDocument.Unreadable>? {
        StateDocument.read(url(for: task), kind: ListingCheckpoint.kind, limit: 1 << 20)?
            .flatMap { members in
                guard let checkpoint = ListingCheckpoint(members), checkpoint.task == task else {
                    return .failure(
                        StateDocument.Unreadable("not a listing checkpoint of this task"))
                }
                return .success(checkpoint)
            }
    }

    /// Replaces the task's checkpoint, durably (file and folder synced), after sweeping the
    /// folder of the temporaries a killed run left (once a run). Blocking.
    func write(_ checkpoint: ListingCheckpoint, temporaries: StaleTemporaries) throws(FileError) {
        try FileSystem.makeOwnFolder(folder.deletingLastPathComponent())
        try FileSystem.makeOwnFolder(folder)
        temporaries.sweep(folder)
        try OutputFile.write(
            Data(checkpoint.bytes), to: url(for: checkpoint.task), tag: temporaries.tag)
    }

    /// Removes the task's checkpoint, if any. Blocking.
    func remove(task: String) {
        unlink(url(for: task).path)
    }
}
