import Courier
import Foundation

/// A page's file work: its save streamed to a temporary or written whole, renamed into place
/// and synced; a records task's part and a capturing task's kept values put in place after the
/// last page. All of it runs on the run's file-work threads (``FileWork``), never on the curl
/// loop that runs the task.
extension JobRunner {
    /// The part file a records task's pages add to; `nil` for a task without `records`.
    @inline(never)
    func recordsPart(of task: ExpandedTask, log: RunLog) -> RecordsPart? {
        task.records.map {
            RecordsPart(target: $0, task: task.id, run: log.run, store: recordsStore)
        }
    }

    // The helpers below are async functions of their own, not inlined: what an inlined
    // helper holds across its await (a response, a continuation's result) would take room in
    // ``execute``'s frame for the whole of every task.

    /// The temporary a streamed save's body goes into, made on a file-work thread; `nil`
    /// when the save's path escapes the output folder or the file cannot be made.
    @inline(never)
    func streamedTemporary(for task: ExpandedTask, page: Int?) async -> FileReplacement? {
        guard let target = streamedTarget(for: task, page: page) else { return nil }
        return await files.run { [temporaries] in
            Self.temporary(beside: target, temporaries: temporaries)
        }
    }

    /// Writes the page's captured values to the task's kept captures, on a file-work thread;
    /// after its last good page, puts the file in place. A file that cannot be written is
    /// dropped: a resume then sends the task again.
    @inline(never)
    func keep(_ kept: KeptCaptures, done: Bool) async {
        let temporaries = temporaries
        let folder = await files.run { () -> URL? in
            do {
                if done { return try kept.commit(temporaries: temporaries) }
                if kept.hasPending { try kept.flush(temporaries: temporaries) }
            } catch {
                kept.discard()
            }
            return nil
        }
        if let folder { await folderSyncs.sync(folder.path) }
    }

    /// Removes a failed task's records part, on a file-work thread.
    @inline(never)
    func discard(_ part: RecordsPart) async {
        await files.run { part.discard() }
    }

    /// Puts the task's records part in place after its last page, before its `ok` line: the
    /// part's bytes and rename on a file-work thread, its folder's sync shared with others.
    @inline(never)
    func committing(_ part: RecordsPart, _ judged: AttemptResult) async -> AttemptResult {
        var result = judged
        do {
            let folder = try await files.run { [temporaries] () throws(FileError) -> URL in
                try part.commit(temporaries: temporaries)
            }
            await folderSyncs.sync(folder.path)
        } catch {
            result.ok = false
            result.failure = (
                "records",
                "cannot keep the records for \(job.outputDir)/\(part.target.path): \(error)"
            )
        }
        return result
    }

    /// Whether the task's saved body goes straight to disk as it arrives, so that memory stays
    /// flat however large it is: when nothing reads the body (captures, body expectations and
    /// pagination all parse it, so those bodies stay in memory, up to the transport's cap).
    @inline(never)
    func streamsSave(_ task: ExpandedTask, capturing: Bool) -> Bool {
        task.save != nil && task.paginate == nil && task.records == nil && task.since == nil
            && task.expectation.json.isEmpty
            && task.expectation.bodyContains.isEmpty
            && !(capturing && !(task.spec(in: job)?.captures.isEmpty ?? true))
    }

    /// Where the task's streamed save goes; `nil` when the path escapes the output folder
    /// (the save then reports it, with the body in memory).
    func streamedTarget(for task: ExpandedTask, page: Int?) -> URL? {
        guard var path = task.save else { return nil }
        if let page { path = path.replacingOccurrences(of: "{page}", with: String(page)) }
        return OutputPath.resolve(path, in: URL(fileURLWithPath: job.outputDir))
    }

    /// A temporary file beside `target` for the transport to write the body into (its folder
    /// made and swept first); `nil` when it cannot be made, and then the body comes to memory
    /// and the save reports the problem as it always does. Blocking: on a file-work thread.
    static func temporary(beside target: URL, temporaries: StaleTemporaries)
        -> FileReplacement?
    {
        do {
            let folder = target.deletingLastPathComponent()
            try FileSystem.makeFolders(folder)
            temporaries.sweep(folder)
            return try FileReplacement(replacing: target, tag: temporaries.tag)
        } catch {
            return nil
        }
    }

    /// The blocking file work an attempt's end needs, done off the curl loops.
    struct PageFiles {
        /// The response to save, and its path under `outputDir` as logged: `ok` once saved.
        var save: (response: HTTPResponse, path: String)?
        /// The temporary the body streamed into: renamed by the save, else removed.
        var streamed: FileReplacement?
        /// Where to record the saved response's validators (a `conditional` task).
        var record: (state: ConditionalState, save: String)?
        /// The task's records part, and what to add to it: the page's part lines, or those of
        /// the saved copy a 304 confirmed (a `conditional` merge, under `outputDir`).
        var part: RecordsPart?
        var records: [UInt8]?
        var recordsFromSave: String?
    }

    /// Does an attempt's file work off the curl loops: the save (bytes on disk, renamed) on a
    /// file-work thread, the rename made durable by a folder sync it may share with other
    /// saves (``FolderSyncs``), then the conditional state's record (its journal line); or the
    /// streamed temporary removed. Returns the attempt's result with the save's outcome.
    @inline(never)
    func completingFiles(_ judged: AttemptResult) async -> AttemptResult {
        let (saved, folder) = await files.run { [self] in doFiles(judged) }
        guard let folder else { return saved }
        await folderSyncs.sync(folder.path)
        // Recorded only once the save is durable: validators for a file a crash could take
        // back would make the next run keep the old file on a 304.
        guard case .some((let state, let save, let response)) = saved.pendingRecord else {
            return saved
        }
        var result = saved
        result.pendingRecord = nil
        await files.run { state.record(response, for: save) }
        return result
    }

    /// The blocking part of ``completingFiles(_:)``: the save without its folder sync; returns
    /// the result and the folder to sync, when something was renamed into it.
    func doFiles(_ judged: AttemptResult) -> (AttemptResult, URL?) {
        var result = judged
        guard let files = result.files else { return (result, nil) }
        result.files = nil
        var folder: URL?
        if let (response, path) = files.save {
            do {
                let (logged, renamedInto) = try save(response, to: path, streamed: files.streamed)
                result.savedTo = logged
                folder = renamedInto
                result.ok = true
            } catch {
                result.failure = ("save", "cannot save to \(job.outputDir)/\(path): \(error)")
            }
            if result.ok, let (state, save) = files.record {
                result.pendingRecord = (state, save, response)
            }
        }
        if result.savedTo == nil { files.streamed?.discard() }
        if result.ok, let part = files.part {
            do {
                if let lines = files.records {
                    try part.append(lines, temporaries: temporaries)
                } else if let save = files.recordsFromSave {
                    try part.append(
                        try savedRecords(save, rule: part.target.rule), temporaries: temporaries)
                }
            } catch {
                result.ok = false
                result.pendingRecord = nil
                result.failure = (
                    "records",
                    "cannot keep the records for \(job.outputDir)/\(part.target.path): \(error)"
                )
            }
        }
        return (result, folder)
    }

    /// The part lines of the saved copy that a 304 confirmed: a `conditional` merge takes the
    /// records again from what it saved, since the run that fetched them may have failed
    /// elsewhere and left its records out of the file. Blocking: on a file-work thread.
    func savedRecords(_ save: String, rule: RecordsRule) throws -> [UInt8] {
        guard let url = OutputPath.resolve(save, in: URL(fileURLWithPath: job.outputDir)) else {
            throw OutputPathError(path: save)
        }
        let bytes = try FileSystem.read(url, limit: job.maxBodyBytes)
        let document: JSONNode
        do {
            document = try JSONParser.parse(bytes)
        } catch {
            throw RecordsProblem(message: "the saved \(save) is not JSON (\(error.message))")
        }
        var lines: [UInt8] = []
        _ = try rule.partLines(of: document, into: &lines)
        return lines
    }

    /// Puts a saved output in place under `outputDir`: the streamed file renamed over it, or
    /// the body in memory written; returns the path as logged. Blocking: on a file-work thread.
    /// The folder's sync is left to the caller (``FolderSyncs``): returns the path as logged
    /// and the folder the file was renamed into.
    func save(
        _ response: HTTPResponse, to path: String, streamed: FileReplacement?
    ) throws -> (logged: String, folder: URL) {
        let folder: URL
        if let streamed, response.savedBody != nil {
            try streamed.commit(syncingFolder: false)
            folder = streamed.target.deletingLastPathComponent()
        } else {
            let output = URL(fileURLWithPath: job.outputDir)
            guard let url = OutputPath.resolve(path, in: output) else {
                throw OutputPathError(path: path)
            }
            folder = url.deletingLastPathComponent()
            temporaries.sweep(folder)
            try OutputFile.write(
                response.body, to: url, tag: temporaries.tag, syncingFolder: false)
        }
        return ((job.outputDir as NSString).appendingPathComponent(path), folder)
    }
}
