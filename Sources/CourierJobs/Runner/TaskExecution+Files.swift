import Courier
import Foundation

/// A page's file work: its save streamed to a temporary or written whole, renamed into place
/// and synced; a records task's part and a capturing task's kept values put in place after the
/// last page. All of it runs on the run's file-work threads (``FileWork``), never on the curl
/// loop that runs the task.
extension JobRunner {
    /// The part file a records task's pages add to; `nil` for a task without `records`.
    @inline(never)
    func recordsPart(of task: ExpandedTask, log: RunLog, listing: Bool) -> RecordsPart? {
        task.records.map {
            RecordsPart(
                target: $0, task: task.id, run: log.run, store: recordsStore, listing: listing)
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
        return await files.run(in: FileSystem.folderPath(of: target.path)) { [temporaries] in
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

    /// Removes a failed task's records part, on a file-work thread; a listing file that a
    /// checkpoint names stays.
    @inline(never)
    func discard(_ part: RecordsPart, keepingListing: Bool) async {
        await files.run { part.discard(keepingListing: keepingListing) }
    }

    /// What a task that ends unfinished leaves: its records part removed (a listing file that
    /// a checkpoint names stays) and its kept captures dropped, so that a resume sends it.
    @inline(never)
    func dropUnfinished(_ part: RecordsPart?, listing: Listing?, kept: KeptCaptures?) async {
        if let part { await discard(part, keepingListing: listing?.wrote == true) }
        if let kept { await files.run { kept.discard() } }
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
            if result.ok { result.recordsKept = part.records }
        } catch {
            recordsFailed(&result, part: part, error)
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
            && !task.responseRules(in: job).contains { !$0.bodyContains.isEmpty }
            && task.expectation.bodyContains.isEmpty
            && !(capturing && !task.captures(in: job).isEmpty)
    }

    /// Where the task's streamed save goes; `nil` when the path escapes the output folder
    /// (the save then reports it, with the body in memory).
    func streamedTarget(for task: ExpandedTask, page: Int?) -> URL? {
        task.savePath(page: page).flatMap(outputFolder.resolve)
    }

    /// A temporary file beside `target` for the transport to write the body into (its folder
    /// made and swept first); `nil` when it cannot be made, and then the body comes to memory
    /// and the save reports the problem as it always does. Blocking: on a file-work thread.
    static func temporary(beside target: URL, temporaries: StaleTemporaries)
        -> FileReplacement?
    {
        do {
            // The folder as text: `target` is resolved and standardized, and each `URL` made
            // on the way cost a save more than its system calls.
            let folder = FileSystem.folderPath(of: target.path)
            try FileSystem.makeFolders(atPath: folder)
            temporaries.sweep(atPath: folder)
            return try FileReplacement(replacing: target, tag: temporaries.tag)
        } catch {
            return nil
        }
    }

    /// The blocking file work an attempt's end needs, done off the curl loops.
    struct PageFiles {
        /// The response to save, and its path under `outputDir` as logged: `ok` once saved.
        var save: (response: HTTPResponse, path: String)?
        /// The task that saves it, for ``SavedPaths``.
        var task = ""
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

    /// Does an attempt's file work off the curl loops: the save's bytes written on a file-work
    /// thread, then made durable and renamed into place with the other saves of its batch
    /// (``GroupCommit``); the records added to the task's part; then the conditional state's
    /// record (its journal line). A streamed temporary not saved is removed. Returns the
    /// attempt's result with the save's outcome.
    @inline(never)
    func completingFiles(_ judged: AttemptResult) async -> AttemptResult {
        var result = judged
        guard let work = result.files else { return result }
        result.files = nil
        if let (_, path) = work.save,
            !savedPaths.claim(path, task: work.task)
        {
            result.failure = (
                "save",
                "cannot save to \(job.outputDir)/\(path): another task of this run or of the night it completes saved that file; give each task its own file (a repair fails the same way until the job file does)"
            )
        } else if let (response, path) = work.save {
            do {
                // A body streamed to its temporary is written already: no file work is due
                // before its commit.
                let written =
                    if let streamed = work.streamed, response.savedBody != nil {
                        streamed
                    } else {
                        try await files.run(in: FileSystem.folderPath(of: path)) {
                            [self] () throws in
                            try writtenSave(response, to: path)
                        }
                    }
                try await groupCommit.commit(written)
                result.savedTo = (job.outputDir as NSString).appendingPathComponent(path)
                result.ok = true
            } catch {
                result.failure = ("save", "cannot save to \(job.outputDir)/\(path): \(error)")
            }
        }
        // A streamed temporary not renamed into place (the save failed, or the body came to
        // memory after all) is removed.
        let leftover = work.streamed.flatMap {
            result.savedTo == nil || work.save?.response.savedBody == nil ? $0 : nil
        }
        if leftover != nil || (result.ok && work.part != nil) {
            result = await files.run { [self, result] in
                leftover?.discard()
                return withRecords(work, result)
            }
        }
        // Recorded only once the save is durable: validators for a file a crash could take
        // back would make the next run keep the old file on a 304.
        if result.ok, let (state, save) = work.record, let (response, _) = work.save {
            await files.run { state.record(response, for: save) }
        }
        return result
    }

    /// The rest of an attempt's blocking file work, after its save: the page's records (or the
    /// saved copy's, after a 304) added to the task's part.
    func withRecords(_ work: PageFiles, _ judged: AttemptResult) -> AttemptResult {
        var result = judged
        guard result.ok, let part = work.part else { return result }
        do {
            if let lines = work.records {
                try part.append(lines, temporaries: temporaries)
            } else if let save = work.recordsFromSave {
                try part.append(
                    try savedRecords(save, target: part.target), temporaries: temporaries)
            }
        } catch {
            recordsFailed(&result, part: part, error)
        }
        return result
    }

    /// Fails `result`: the records of `part` could not be kept.
    func recordsFailed(_ result: inout AttemptResult, part: RecordsPart, _ error: any Error) {
        result.ok = false
        result.failure = (
            "records", "cannot keep the records for \(job.outputDir)/\(part.target.path): \(error)"
        )
    }

    /// The part lines of the saved copy that a 304 confirmed: a `conditional` merge takes the
    /// records again from what it saved, since the run that fetched them may have failed
    /// elsewhere and left its records out of the file. Blocking: on a file-work thread.
    func savedRecords(_ save: String, target: RecordsTarget) throws -> [UInt8] {
        let rule = target.rule
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
        _ = try rule.partLines(of: document, added: target.added, into: &lines)
        return lines
    }

    /// A saved output's bytes in a temporary beside its place under `outputDir`, for
    /// ``GroupCommit`` to put in place: the body in memory written to a new file (its folder
    /// made and swept first). Blocking: on a file-work thread.
    func writtenSave(_ response: HTTPResponse, to path: String) throws -> FileReplacement {
        guard let url = outputFolder.resolve(path) else {
            throw OutputPathError(path: path, reason: outputFolder.refusal(of: path))
        }
        let folder = FileSystem.folderPath(of: url.path)
        try FileSystem.makeFolders(atPath: folder)
        temporaries.sweep(atPath: folder)
        let replacement = try FileReplacement(replacing: url, tag: temporaries.tag)
        do {
            try replacement.write(response.body)
        } catch {
            replacement.discard()
            throw error
        }
        return replacement
    }
}
