import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One task's records in this run: streamed page by page into a temporary in the records
/// file's folder of parts (``RecordsStore``), and renamed into place when the task succeeds,
/// before its `ok` line is logged (as a save is), so that a run that resumes this one finds
/// them. A failed task's temporary is removed; a killed run's is swept by the next run of the
/// job (``StaleTemporaries``).
///
/// Used by one task at a time, on the run's file-work threads (``FileWork``).
final class RecordsPart: Sendable {
    let target: RecordsTarget
    let task: String
    /// The records file's folder of parts.
    let folder: URL
    private let name: String
    private let store: RecordsStore
    private let file = Locked<PartFile?>(nil)
    private let run: String
    /// A paginated task's part goes to a listing file (``RecordsListingFile``), which a
    /// checkpoint can name, rather than to a temporary.
    let listing: Bool
    /// The earlier listing file whose records come first (a resumed listing), until the
    /// part's file is made.
    private let seed = Locked<(url: URL, bytes: Int, count: Int)?>(nil)

    /// Where the part's lines go until it is put in place.
    private enum PartFile {
        case temporary(AppendingTemporary)
        case listing(RecordsListingFile)
    }

    init(
        target: RecordsTarget, task: String, run: String, store: RecordsStore,
        listing: Bool = false
    ) {
        self.target = target
        self.task = task
        self.store = store
        self.run = run
        self.listing = listing
        folder = store.folder(for: target.path)
        name = store.partName(task: task, run: run)
    }

    /// Appends part lines (one page's). Blocking.
    func append(_ lines: [UInt8], temporaries: StaleTemporaries) throws(FileError) {
        try file.withLock { file in
            Result { () throws(FileError) in
                try prepare(&file, temporaries: temporaries)
                switch file {
                case .temporary(let temporary)?: try temporary.append(lines)
                case .listing(var listing)?:
                    try listing.append(lines)
                    file = .listing(listing)
                case nil: break
                }
            }
        }.get()
        // One part line per record, each ending in a newline.
        let added = lines.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
        kept.withLock { $0 += added }
    }

    /// The records appended so far (`checks.minRecords` counts them once the task is ok).
    var records: Int { kept.withLock { $0 } }
    private let kept = Locked(0)

    /// Puts the part in place (made now when no page had records): `fsync`ed and renamed,
    /// its folder left to sync (``FolderSyncs``), which is returned. Blocking.
    func commit(temporaries: StaleTemporaries) throws(FileError) -> URL {
        try file.withLock { file in
            Result { () throws(FileError) in
                try prepare(&file, temporaries: temporaries)
                switch file {
                case .temporary(var temporary)?: try temporary.commit()
                case .listing(var listing)?: try listing.commit()
                case nil: break
                }
                file = nil
            }
        }.get()
        return folder
    }

    /// Starts the part with the records of an earlier run's listing file (its first `bytes`,
    /// `count` records): a resumed listing. Called before the first page's records.
    func resume(from earlier: URL, bytes: Int, count: Int) {
        seed.withLock { $0 = (earlier, bytes, count) }
    }

    /// The listing file made durable: its name, how many bytes it holds, the records in them
    /// and their hash (made now, seeded, when no page had records yet). Blocking.
    func checkpoint(temporaries: StaleTemporaries) throws(FileError) -> ListingRecords? {
        try file.withLock { file in
            Result { () throws(FileError) -> ListingRecords? in
                try prepare(&file, temporaries: temporaries)
                guard case .listing(var listing)? = file else { return nil }
                let bytes = try listing.sync()
                file = .listing(listing)
                return ListingRecords(
                    file: folder.lastPathComponent + "/" + listing.url.lastPathComponent,
                    bytes: bytes, count: records, hash: RecordsStore.hex(listing.recordsHash))
            }
        }.get()
    }

    /// Removes the task's listing files other than this run's (those of runs whose
    /// checkpoint is gone or was replaced). Blocking.
    func removeOtherListings() {
        let key = RecordsStore.hex(FNV1a.taskKey(job: store.job, task: task))
        let own = RecordsListingFile.name(key: key, run: run)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        for name in names
        where name.hasPrefix(key + ".") && name.hasSuffix(".listing") && name != own {
            unlink(folder.appendingPathComponent(name).path)
        }
    }

    /// Removes the part's file, if any: the task failed. A listing file that a checkpoint
    /// names (`keepingListing`) stays, for a resume to go on from. Blocking.
    func discard(keepingListing: Bool = false) {
        file.withLock { file in
            switch file {
            case .temporary(var temporary)?: temporary.discard()
            case .listing(var listing)?: listing.close(keeping: keepingListing)
            case nil: break
            }
            file = nil
        }
    }

    /// Makes the temporary and writes the header, the first time.
    private func prepare(_ file: inout PartFile?, temporaries: StaleTemporaries)
        throws(FileError)
    {
        guard file == nil else { return }
        try FileSystem.makeOwnFolder(store.outputDir.appendingPathComponent(".courier"))
        try FileSystem.makeOwnFolder(store.root)
        try FileSystem.makeOwnFolder(folder)
        temporaries.sweep(folder)
        let header = Array(
            RecordsStore.Header(
                task: task, target: target.path, settings: target.rule.settings
            ).line)
        guard listing else {
            let opened = try AppendingTemporary(
                replacing: folder.appendingPathComponent(name), tag: temporaries.tag)
            file = .temporary(opened)
            try opened.append(header)
            return
        }
        let key = RecordsStore.hex(FNV1a.taskKey(job: store.job, task: task))
        // A listing file of this run and task left by a failed attempt at it is replaced.
        unlink(folder.appendingPathComponent(RecordsListingFile.name(key: key, run: run)).path)
        var opened = try RecordsListingFile(
            folder: folder, key: key, run: run, header: header, tag: temporaries.tag)
        file = .listing(opened)
        if let (earlier, bytes, count) = seed.withLock({ $0 }) {
            try opened.append(recordsOf: earlier, length: bytes)
            file = .listing(opened)
            kept.withLock { $0 += count }
        }
    }
}
