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
    private let state = Locked<(replacement: FileReplacement?, descriptor: Int32)>((nil, -1))

    init(target: RecordsTarget, task: String, run: String, store: RecordsStore) {
        self.target = target
        self.task = task
        self.store = store
        folder = store.folder(for: target.path)
        name = store.partName(task: task, run: run)
    }

    /// Appends part lines (one page's). Blocking.
    func append(_ lines: [UInt8], temporaries: StaleTemporaries) throws(FileError) {
        try state.withLock { state in
            Result { () throws(FileError) in
                try prepare(&state, temporaries: temporaries)
                if let code = lines.withUnsafeBytes({ POSIX.writeAll(state.descriptor, $0) }) {
                    throw FileError(path: path, action: "write", code: code)
                }
            }
        }.get()
    }

    /// Puts the part in place (made now when no page had records): `fsync`ed and renamed,
    /// its folder left to sync (``FolderSyncs``), which is returned. Blocking.
    func commit(temporaries: StaleTemporaries) throws(FileError) -> URL {
        try state.withLock { state in
            Result { () throws(FileError) in
                try prepare(&state, temporaries: temporaries)
                POSIX.close(&state.descriptor)
                let replacement = state.replacement
                state.replacement = nil
                try replacement?.commit(syncingFolder: false)
            }
        }.get()
        return folder
    }

    /// Removes the temporary, if any: the task failed. Blocking.
    func discard() {
        state.withLock { state in
            POSIX.close(&state.descriptor)
            state.replacement?.discard()
            state.replacement = nil
        }
    }

    private var path: String { folder.appendingPathComponent(name).path }

    /// Makes the temporary and writes the header, the first time.
    private func prepare(
        _ state: inout (replacement: FileReplacement?, descriptor: Int32),
        temporaries: StaleTemporaries
    ) throws(FileError) {
        guard state.replacement == nil else { return }
        try FileSystem.makeOwnFolder(store.outputDir.appendingPathComponent(".courier"))
        try FileSystem.makeOwnFolder(store.root)
        try FileSystem.makeOwnFolder(folder)
        temporaries.sweep(folder)
        let replacement = try FileReplacement(
            replacing: folder.appendingPathComponent(name), tag: temporaries.tag)
        let descriptor = open(
            replacement.temporary.path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else {
            let code = errno
            replacement.discard()
            throw FileError(path: replacement.temporaryPath.path, action: "open", code: code)
        }
        state = (replacement, descriptor)
        let header = RecordsStore.Header(
            task: task, target: target.path, settings: target.rule.settings
        ).line
        if let code = header.withUnsafeBytes({ POSIX.writeAll(descriptor, $0) }) {
            throw FileError(path: path, action: "write", code: code)
        }
    }
}
