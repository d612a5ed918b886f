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
    private let folder: URL
    private let name: String
    private let store: RecordsStore
    private let file = Locked<AppendingTemporary?>(nil)

    init(target: RecordsTarget, task: String, run: String, store: RecordsStore) {
        self.target = target
        self.task = task
        self.store = store
        folder = store.folder(for: target.path)
        name = store.partName(task: task, run: run)
    }

    /// Appends part lines (one page's). Blocking.
    func append(_ lines: [UInt8], temporaries: StaleTemporaries) throws(FileError) {
        try file.withLock { file in
            Result { () throws(FileError) in
                try prepare(&file, temporaries: temporaries)
                try file?.append(lines)
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
                try file?.commit()
                file = nil
            }
        }.get()
        return folder
    }

    /// Removes the temporary, if any: the task failed. Blocking.
    func discard() {
        file.withLock { file in
            file?.discard()
            file = nil
        }
    }

    /// Makes the temporary and writes the header, the first time.
    private func prepare(_ file: inout AppendingTemporary?, temporaries: StaleTemporaries)
        throws(FileError)
    {
        guard file == nil else { return }
        try FileSystem.makeOwnFolder(store.outputDir.appendingPathComponent(".courier"))
        try FileSystem.makeOwnFolder(store.root)
        try FileSystem.makeOwnFolder(folder)
        temporaries.sweep(folder)
        let opened = try AppendingTemporary(
            replacing: folder.appendingPathComponent(name), tag: temporaries.tag)
        file = opened
        let header = RecordsStore.Header(
            task: task, target: target.path, settings: target.rule.settings
        ).line
        try opened.append(Array(header))
    }
}
