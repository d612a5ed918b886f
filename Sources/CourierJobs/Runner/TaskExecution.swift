import Courier
import Foundation

/// One task run to its end: each page sent through the retry layer (and a token renewal when
/// the task has one), judged against the task's expectations, saved, logged and paginated.
extension JobRunner {
    /// Runs one task, every page of it; whether it succeeded.
    ///
    /// Only the send and the file work are awaited here: what comes before and after them is
    /// in synchronous helpers, because every value an async function holds lives in the
    /// task's heap frame. Written inline, this loop's frame was 18 KiB, allocated and freed
    /// for every task; with the page's state in classes and each await in a helper of its own
    /// it is 1.5 KiB (measured from the binary's async function pointers, docs/benchmarks.md).
    ///
    /// A page ends in this order: judged (captures taken, records found), saved (its bytes on
    /// disk and renamed into place), its conditional state recorded, its records added to the
    /// task's part, the part put in place after the last page, its line logged, the task
    /// reported finished. The file work runs on the run's file-work threads (``FileWork``),
    /// never on the curl loop that runs the task.
    @inline(never)
    func execute(
        _ task: ExpandedTask, shared: AnyHTTPClient, log: RunLog, progress: Progress,
        reporter: FailureReporter, state: ConditionalState?, feed: TaskFeed?,
        tokens: [String: CapturedToken] = [:], oauth2: OAuth2Sessions? = nil
    ) async -> Bool {
        let cursor = firstPage(of: task, state: state)
        let streams = streamsSave(task, capturing: feed != nil)
        let part = recordsPart(of: task, log: log)
        let kept =
            feed == nil
            ? nil
            : KeptCaptures(
                task: task, job: job, run: log.run, shard: options.shard, redactor: log.redactor)
        while true {
            let streamed = streams ? await streamedTemporary(for: task, page: cursor.logged) : nil
            let send = preparePage(
                cursor, of: task, shared: shared, log: log, tokens: tokens, oauth2: oauth2,
                streamed: streamed)
            let failure = await sent(send)
            var result = judgePage(
                send, of: task, cursor: cursor, failure: failure, state: state, feed: feed,
                kept: kept, part: part)
            if result.hasFiles { result = await completingFiles(result) }
            let step = nextPage(send, of: task, cursor: cursor, result: &result)
            if let part, result.ok, step.isLast { result = await committing(part, result) }
            if let kept { await keep(kept, done: result.ok && step.isLast) }
            if let ok = finishPage(
                send, of: task, cursor: cursor, result: result, step: step, log: log,
                progress: progress, reporter: reporter)
            {
                if !ok, let part { await discard(part) }
                if !ok, let kept { await files.run { kept.discard() } }
                return ok
            }
        }
    }

    /// The part file a records task's pages add to; `nil` for a task without `records`.
    @inline(never)
    private func recordsPart(of task: ExpandedTask, log: RunLog) -> RecordsPart? {
        task.records.map {
            RecordsPart(target: $0, task: task.id, run: log.run, store: recordsStore)
        }
    }

    // The helpers below are async functions of their own, not inlined: what an inlined
    // helper holds across its await (a response, a continuation's result) would take room in
    // ``execute``'s frame for the whole of every task.

    /// Sends the page (its retries, its token renewal); the error it ended with, if any. The
    /// response is in the attempts the page's observer kept.
    @inline(never)
    private func sent(_ send: PageSend) async -> (any Error)? {
        do {
            if let renewing = send.renewing {
                _ = try await renewing.perform(send.request)
            } else {
                _ = try await send.retrying.perform(send.request)
            }
            return nil
        } catch {
            return error
        }
    }

    /// The temporary a streamed save's body goes into, made on a file-work thread; `nil`
    /// when the save's path escapes the output folder or the file cannot be made.
    @inline(never)
    private func streamedTemporary(for task: ExpandedTask, page: Int?) async -> FileReplacement? {
        guard let target = streamedTarget(for: task, page: page) else { return nil }
        return await files.run { [temporaries] in
            Self.temporary(beside: target, temporaries: temporaries)
        }
    }

    /// Writes the page's captured values to the task's kept captures, on a file-work thread;
    /// after its last good page, puts the file in place. A file that cannot be written is
    /// dropped: a resume then sends the task again.
    @inline(never)
    private func keep(_ kept: KeptCaptures, done: Bool) async {
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
    private func discard(_ part: RecordsPart) async {
        await files.run { part.discard() }
    }

    /// Where a task is in its pages.
    ///
    /// A class, like ``PageSend`` and ``AttemptResult``'s fields: what ``execute`` holds across
    /// its awaits lives in the task's async frame, and as values these made that frame 13 KiB
    /// per task in flight (each copy and return value a slot of its own).
    private final class PageCursor {
        var paginator: Paginator?
        var request: HTTPRequest
        var page = 1
        /// The greatest `since` value seen on the pages so far.
        var sinceValue: String?
        /// The `since.max` pointer, once a page had items but no value at it (a misspelt
        /// member name).
        var sinceMissed: String?
        /// Requests sent for the task so far, every attempt counted.
        var requests = 0

        /// The page number as logged: `nil` for a task that does not paginate.
        var logged: Int? { paginator == nil ? nil : page }

        init(paginator: Paginator?, request: HTTPRequest) {
            self.paginator = paginator
            self.request = request
        }
    }

    /// One page's request and the clients that send it, made before it is sent.
    private final class PageSend {
        let request: HTTPRequest
        let retrying: RetryingHTTPClient<AnyHTTPClient>
        /// The retry layer under a token renewal, when the task's token can be renewed (a
        /// captured login token, or an OAuth2 client's).
        let renewing: AnyHTTPClient?
        let attempts: Locked<PageAttempts>
        let streamed: FileReplacement?

        init(
            request: HTTPRequest, retrying: RetryingHTTPClient<AnyHTTPClient>,
            renewing: AnyHTTPClient?, attempts: Locked<PageAttempts>, streamed: FileReplacement?
        ) {
            self.request = request
            self.retrying = retrying
            self.renewing = renewing
            self.attempts = attempts
            self.streamed = streamed
        }
    }

    @inline(never)
    private func firstPage(of task: ExpandedTask, state: ConditionalState?) -> PageCursor {
        var request = task.request
        if task.conditional, let state, var save = task.save {
            if task.paginate != nil { save = save.replacingOccurrences(of: "{page}", with: "1") }
            Self.askIfChanged(&request, state: state, save: save, outputDir: job.outputDir)
        }
        return PageCursor(
            paginator: task.paginate.map { Paginator(rule: $0, first: task.request) },
            request: request)
    }

    @inline(never)
    private func preparePage(
        _ cursor: PageCursor, of task: ExpandedTask, shared: AnyHTTPClient, log: RunLog,
        tokens: [String: CapturedToken], oauth2: OAuth2Sessions?, streamed: FileReplacement?
    ) -> PageSend {
        // One page (or the task's only request), with its own retries.
        let pageNumber = cursor.logged
        let attempts = Locked(PageAttempts())
        // What the observers below log, taken out of the task so that their contexts do
        // not copy the whole task (request and expectations included) on every page.
        let taskID = task.id
        let replayOf = task.replayOf
        let retrying = HTTPStack.retrying(
            shared, task: task, time: time, hosts: hosts, rateLimited: job.rateLimit != nil
        ) { attempt, waits in
            // One lock per attempt: numbered on after a renewal, and kept when final, with
            // what it waited before it was sent.
            let attempt = attempts.withLock { state -> RetryAttempt in
                var attempt = attempt
                attempt.number += state.renumbering
                if attempt.retryDelay == nil {
                    (state.last, state.waits) = (attempt, waits)
                }
                return attempt
            }
            if attempt.retryDelay != nil {
                try? log.request(
                    task: taskID, attempt: attempt, outcome: .retry, replayOf: replayOf,
                    page: pageNumber, waits: waits)
            }
        }
        let willResend: @Sendable (String) -> Void = { name in
            // The token was rejected and renewed: the rejected attempt is a retry.
            let (rejected, waits) = attempts.withLock {
                state -> (RetryAttempt?, AttemptWaits) in
                defer { (state.last, state.waits) = (nil, AttemptWaits()) }
                if let last = state.last { state.renumbering = last.number }
                return (state.last, state.waits)
            }
            if var rejected {
                rejected.retryDelay = 0
                try? log.request(
                    task: taskID, attempt: rejected, outcome: .retry,
                    replayOf: replayOf, page: pageNumber, renewedToken: name, waits: waits)
            }
        }
        let renewing =
            renewing(retrying, for: task, tokens: tokens, willResend: willResend)
            ?? authorizing(retrying, for: task, sessions: oauth2, willResend: willResend)
        var request = cursor.request
        if let streamed { request.bodyDestination = .file(streamed.temporary) }
        return PageSend(
            request: request, retrying: retrying, renewing: renewing, attempts: attempts,
            streamed: streamed)
    }

    /// Judges the page just sent: whether it is ok, and the file work it still needs (its
    /// save, the conditional state's record, a temporary to remove), which the caller has
    /// done off the loop before ``finishPage``.
    @inline(never)
    private func judgePage(
        _ send: PageSend, of task: ExpandedTask, cursor: PageCursor, failure: (any Error)?,
        state: ConditionalState?, feed: TaskFeed?, kept: KeptCaptures?, part: RecordsPart?
    ) -> AttemptResult {
        guard let attempt = send.attempts.withLock({ $0.last }) else {
            var result = AttemptResult()
            if let streamed = send.streamed { result.files = PageFiles(streamed: streamed) }
            // No request was sent: no token could be had for it (an OAuth2 token endpoint
            // that refused, failed or answered no token).
            if let problem = failure as? AuthenticatingHTTPClient<AnyHTTPClient>.Failure {
                // A run that stops cancels the token request its tasks waited for.
                let cancelled =
                    problem.underlying is CancellationError
                    || (problem.underlying as? HTTPError)?.kind == .cancelled
                result.failure = (cancelled ? "cancelled" : "token", "\(problem)")
            }
            return result
        }
        cursor.requests += attempt.requestsSent

        // Captures are taken in `evaluate` (secret ones learned by the redactor) before
        // the line that could show them is written, and before anything is saved.
        var result = evaluate(
            attempt, of: task, page: cursor.logged,
            captures: feed.map { feed in
                { values, rule in
                    try feed.capture(values, for: rule)
                    kept?.append(values, for: rule)
                }
            }, streamed: send.streamed, part: part)
        if let tokenProblem = failure as? AuthenticatingHTTPClient<AnyHTTPClient>.Failure,
            !result.ok, var failure = result.failure
        {
            failure.message += "; \(tokenProblem)"
            result.failure = failure
        }
        // A 200 saved for a conditional task: its validators are recorded once it is saved.
        // Of a paginated task, the first page's (the next run asks for it first).
        if let saved = result.files?.save, task.conditional, let state, cursor.page == 1 {
            result.files?.record = (state, saved.path)
            if HTTPValidators(saved.response.headers).isEmpty {
                noteMissingValidators(of: task)
            }
        }
        return result
    }

    /// Whether a page follows the one just judged and saved, and what to warn about when none
    /// does though the page looked full; a pagination error fails `result`.
    private final class PageStep {
        var next: HTTPRequest?
        var warning: String?
        /// A `since` task that ended without a cursor though its pages had items.
        var sinceNote: String?

        /// Whether no page follows. (Matched, not compared: `next == nil` took `HTTPRequest`'s
        /// `==`, with two copies of the request.)
        var isLast: Bool {
            if case .none = next { true } else { false }
        }
    }

    @inline(never)
    private func nextPage(
        _ send: PageSend, of task: ExpandedTask, cursor: PageCursor,
        result: inout AttemptResult
    ) -> PageStep {
        let step = PageStep()
        guard result.ok, case .success(let response)? = send.attempts.withLock({ $0.last })?.outcome
        else { return step }
        if let rule = task.since, response.status != 304 {
            cursor.sinceValue = Self.sinceValue(
                rule, in: response, document: result.document, after: cursor.sinceValue)
            if case .max(let pointer) = rule.source, Self.misses(pointer, in: result.document) {
                cursor.sinceMissed = pointer
            }
        }
        // A 304 (the first page of a conditional task) ends the pages: the saved ones stand.
        guard !result.notModified, var paginator = cursor.paginator else {
            return noted(step, cursor: cursor, ok: result.ok)
        }
        do {
            step.next = try paginator.next(
                after: response, to: cursor.request, document: result.document)
            // The first page's validators are not the next page's.
            if task.conditional {
                step.next = step.next.map { Self.unconditional($0, as: task.request) }
            }
            cursor.paginator = paginator
            step.warning = step.isLast ? paginator.missingNext : nil
        } catch {
            result.ok = false
            result.failure = ("pagination", error.message)
        }
        return noted(step, cursor: cursor, ok: result.ok)
    }

    /// Puts the task's records part in place after its last page, before its `ok` line: the
    /// part's bytes and rename on a file-work thread, its folder's sync shared with others.
    @inline(never)
    private func committing(_ part: RecordsPart, _ judged: AttemptResult) async -> AttemptResult {
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

    /// Logs the page just judged and saved; moves the cursor to the next page and returns
    /// `nil` when there is one, or whether the task succeeded.
    @inline(never)
    private func finishPage(
        _ send: PageSend, of task: ExpandedTask, cursor: PageCursor, result: AttemptResult,
        step: PageStep, log: RunLog, progress: Progress, reporter: FailureReporter
    ) -> Bool? {
        guard
            let (attempt, waits) = send.attempts.withLock({ state in
                state.last.map { ($0, state.waits) }
            })
        else {
            if let failure = result.failure {
                // Nothing was sent for this page, and the task ends here with its own line.
                try? log.invalid(
                    task: task.id, kind: failure.kind, reason: failure.message,
                    replayOf: task.replayOf)
                progress.taskFinished(ok: false, requests: cursor.requests)
                let onPage = cursor.logged.map { " on page \($0)" } ?? ""
                reporter.failed(task: task.id, context: onPage, reason: failure.message)
            }
            return false
        }
        let pageNumber = cursor.logged
        let next = step.next
        let warning = [step.warning, step.sinceNote].compactMap { $0 }.joined(separator: "; ")
        let outcome: LogOutcome = !result.ok ? .failed : step.isLast ? .ok : .page
        try? log.request(
            task: task.id, attempt: attempt, outcome: outcome, savedTo: result.savedTo,
            failure: attempt.outcome.isFailure ? nil : result.failure,
            replayOf: task.replayOf, notModified: result.notModified, page: pageNumber,
            warning: warning.isEmpty ? nil : warning, waits: waits)
        if let warning = step.warning {
            reporter.report("warning: task \(task.id) may have stopped early: \(warning)")
        }
        if let note = step.sinceNote { reporter.report("warning: task \(task.id): \(note)") }
        guard result.ok, let next else {
            // Every page was fine: the cursor may move (at the run's next write of it).
            if result.ok, let value = cursor.sinceValue {
                if task.records != nil {
                    since?.hold(value, for: task.id)
                } else {
                    since?.record(value, for: task.id)
                }
            }
            progress.taskFinished(
                ok: result.ok, requests: cursor.requests, notModified: result.notModified)
            if !result.ok, let failure = result.failure {
                let onPage = pageNumber.map { " on page \($0)" } ?? ""
                reporter.failed(
                    task: task.id,
                    context:
                        "\(onPage) after \(attempt.number) attempt\(attempt.number == 1 ? "" : "s")",
                    reason: failure.message)
            }
            return result.ok
        }
        cursor.request = next
        cursor.page += 1
        return nil
    }

    /// `request` without the conditions the first page was asked with (those the task did not
    /// set itself).
    static func unconditional(_ request: HTTPRequest, as original: HTTPRequest) -> HTTPRequest {
        var request = request
        for name in ["If-None-Match", "If-Modified-Since"] where !original.headers.contains(name) {
            request.headers.remove(name)
        }
        return request
    }

    /// One note per task of the job that a `conditional` save came with neither `ETag` nor
    /// `Last-Modified`: the next run cannot ask whether it changed and fetches it whole.
    /// Not under `--quiet`, which promises silence when every task succeeds.
    func noteMissingValidators(of task: ExpandedTask) {
        let first = validatorNotes.withLock { $0.insert(task.specIndex ?? -1).inserted }
        guard first, !options.quiet else { return }
        console.error(
            "courier: \(job.name): note: task \(task.id) (\(task.specPath)) is conditional, but the server sent neither ETag nor Last-Modified: the next run cannot ask whether it changed, and fetches it whole"
        )
    }

    /// The task's `since` value after `response` (`document`: its body as JSON): the greatest
    /// of `previous` and the page's values at the pointer, or the header field's value.
    static func sinceValue(
        _ rule: SinceRule, in response: HTTPResponse, document: JSONNode?,
        after previous: String?
    ) -> String? {
        switch rule.source {
        case .header(let name):
            return response.headers[name].flatMap { $0.isEmpty ? nil : $0 } ?? previous
        case .max(let pointer):
            guard let document else { return previous }
            var greatest = previous
            for node in JSONPointer.resolveAll(pointer, in: document) {
                guard let value = SinceRule.value(of: node) else { continue }
                if let current = greatest, !SinceRule.isLater(value, than: current) { continue }
                greatest = value
            }
            return greatest
        }
    }

    /// `step` with a note when the task ends here with no cursor though its pages had items:
    /// every run would otherwise quietly fetch everything from `start` again.
    private func noted(_ step: PageStep, cursor: PageCursor, ok: Bool) -> PageStep {
        guard step.isLast, ok, let pointer = cursor.sinceMissed, cursor.sinceValue == nil
        else { return step }
        step.sinceNote =
            "since: no value at \(pointer) on a page with items, so the cursor does not move and the next run asks from the same point again"
        return step
    }

    /// Whether `document` has items where `pointer` (with `*`) looks, but no cursor value at it.
    static func misses(_ pointer: String, in document: JSONNode?) -> Bool {
        guard let document, let star = pointer.range(of: "/*") else { return false }
        let values = JSONPointer.resolveAll(pointer, in: document).compactMap(SinceRule.value)
        guard values.isEmpty else { return false }
        let items = JSONPointer.resolve(String(pointer[..<star.lowerBound]), in: document)
        if case .array(let elements)? = items?.value { return !elements.isEmpty }
        return false
    }

    /// The final attempt of one page, and how far its attempts are renumbered: after a
    /// rejected token was renewed, the retry layer counts from 1 again, and the log goes on.
    private struct PageAttempts {
        var last: RetryAttempt?
        var renumbering = 0
        /// What the final attempt waited before it was sent.
        var waits = AttemptWaits()
    }

    /// Whether the task's saved body goes straight to disk as it arrives, so that memory stays
    /// flat however large it is: when nothing reads the body (captures, body expectations and
    /// pagination all parse it, so those bodies stay in memory, up to the transport's cap).
    @inline(never)
    private func streamsSave(_ task: ExpandedTask, capturing: Bool) -> Bool {
        task.save != nil && task.paginate == nil && task.records == nil && task.since == nil
            && task.expectation.json.isEmpty
            && task.expectation.bodyContains.isEmpty
            && !(capturing && !(task.spec(in: job)?.captures.isEmpty ?? true))
    }

    /// Where the task's streamed save goes; `nil` when the path escapes the output folder
    /// (the save then reports it, with the body in memory).
    private func streamedTarget(for task: ExpandedTask, page: Int?) -> URL? {
        guard var path = task.save else { return nil }
        if let page { path = path.replacingOccurrences(of: "{page}", with: String(page)) }
        return OutputPath.resolve(path, in: URL(fileURLWithPath: job.outputDir))
    }

    /// A temporary file beside `target` for the transport to write the body into (its folder
    /// made and swept first); `nil` when it cannot be made, and then the body comes to memory
    /// and the save reports the problem as it always does. Blocking: on a file-work thread.
    private static func temporary(beside target: URL, temporaries: StaleTemporaries)
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

    /// Hands the response's captured values to `store` (the feed); why not, when they cannot
    /// be taken. `parsed`: the body as JSON, when the caller parsed it already.
    private func takeCaptures(
        of task: ExpandedTask, from response: HTTPResponse, parsed: JSONNode?,
        into store: ([String], CaptureRule) throws -> Void
    )
        -> String?
    {
        let rules = task.spec(in: job)?.captures ?? []
        guard !rules.isEmpty else { return nil }
        let document: JSONNode? =
            rules.contains { if case .json = $0.source { true } else { false } }
            ? parsed ?? (try? JSONParser.parse([UInt8](response.body))) : nil
        for rule in rules {
            switch rule.values(in: response, document: document) {
            case .success(let values):
                do {
                    try store(values, rule)
                } catch {
                    return "\(error)"
                }
            case .failure(let problem):
                return problem.message
            }
        }
        return nil
    }

    /// Adds `If-None-Match`/`If-Modified-Since` from the state, when the saved output is
    /// still there (a deleted file must be fetched whole) and the task did not set them.
    static func askIfChanged(
        _ request: inout HTTPRequest, state: ConditionalState, save: String, outputDir: String
    ) {
        guard let validators = state.validators(for: save),
            FileManager.default.fileExists(
                atPath: URL(fileURLWithPath: outputDir).appendingPathComponent(save).path)
        else { return }
        validators.addConditions(to: &request)
    }

    /// What one final attempt means for its task: ok or why not, and what was saved.
    ///
    /// Its ``Fields`` are in one box, copied only when a shared copy changes: ``execute``
    /// holds results across its awaits, and each copy of the fields (two responses among them)
    /// took a slot of its own in the task's async frame. Fields read and change as its own.
    @dynamicMemberLookup
    struct AttemptResult: Sendable {
        struct Fields: Sendable {
            var ok = false
            var savedTo: String?
            var notModified = false
            var failure: (kind: String, message: String)?
            /// File work still to do before the attempt is logged (``completingFiles(_:)``).
            var files: PageFiles?
            /// A conditional record waiting for its save's folder sync.
            var pendingRecord: (state: ConditionalState, save: String, response: HTTPResponse)?
            /// The body as JSON, parsed once for the records, captures, cursor and next page
            /// that need it (`nil` when none does, or it is not JSON).
            var document: JSONNode?
        }

        // Safe: a box is changed only through a result that holds its one reference, and
        // only read once shared.
        private final class Box: @unchecked Sendable {
            var fields = Fields()
        }

        private var box = Box()

        /// Whether file work waits (``Fields/files``), read without copying it out.
        var hasFiles: Bool { box.fields.files != nil }

        subscript<Value>(dynamicMember path: WritableKeyPath<Fields, Value>) -> Value {
            get { box.fields[keyPath: path] }
            set {
                if !isKnownUniquelyReferenced(&box) {
                    let copy = Box()
                    copy.fields = box.fields
                    box = copy
                }
                box.fields[keyPath: path] = newValue
            }
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
    private func doFiles(_ judged: AttemptResult) -> (AttemptResult, URL?) {
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
    private func savedRecords(_ save: String, rule: RecordsRule) throws -> [UInt8] {
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

    /// Judges an attempt; a save it calls for is left in ``AttemptResult/files`` (not yet
    /// `ok`), for ``completingFiles(_:)``.
    ///
    /// - Parameter streamed: where the transport wrote the body, when it went to a file.
    /// - Parameter part: the task's records part, when it writes records (not for a renewal).
    func evaluate(
        _ attempt: RetryAttempt, of task: ExpandedTask, page: Int?,
        captures: (([String], CaptureRule) throws -> Void)?, streamed: FileReplacement?,
        part: RecordsPart? = nil
    ) -> AttemptResult {
        var result = AttemptResult()
        if let streamed { result.files = PageFiles(streamed: streamed) }
        switch attempt.outcome {
        case .success(let response) where task.accepts(response.status):
            // The status is right: the rest of `expect`, the captures, the records, then the
            // save.
            var records: Result<[UInt8], RecordsProblem>?
            var document: JSONNode?
            if let part, response.status != 304 {
                (records, document) = Self.records(of: response, rule: part.target.rule)
            } else if response.status != 304, task.paginate != nil || task.since != nil {
                document = try? JSONParser.parse([UInt8](response.body))
            }
            result.document = document
            if let reason = task.expectation.failure(
                for: response, durationMs: attempt.duration * 1000,
                scrub: console.redactor.scrub)
            {
                var message = reason
                if let stop = attempt.stopReason { message += "; \(stop)" }
                result.failure = ("expectation", message)
            } else if let captures,
                let problem = takeCaptures(
                    of: task, from: response, parsed: document, into: captures)
            {
                result.failure = ("capture", problem)
            } else if case .failure(let problem)? = records {
                result.failure = ("records", problem.message)
            } else if response.status == 304 {
                // Not Modified has no body: the saved output stays as it is. A conditional
                // merge takes its records again from the saved copy.
                result.notModified = true
                result.ok = true
                if let part, task.conditional, let save = task.save {
                    result.files = PageFiles(streamed: streamed, part: part, recordsFromSave: save)
                }
            } else if var save = task.save {
                if let page { save = save.replacingOccurrences(of: "{page}", with: String(page)) }
                result.files = PageFiles(
                    save: (response, save), streamed: streamed, part: part,
                    records: try? records?.get())
            } else {
                result.ok = true
                if let part {
                    result.files = PageFiles(
                        streamed: streamed, part: part, records: try? records?.get())
                }
            }
        case .success(let response):
            let expected =
                task.expectStatus.map { $0.sorted().map(String.init).joined(separator: ", ") }
                ?? "2xx"
            var message = "status \(response.status), expected \(expected)"
            if let reason = attempt.stopReason { message += "; \(reason)" }
            result.failure = ("unexpectedStatus", message)
        case .failure(let error):
            result.failure = (error.kind.rawValue, error.message)
        }
        return result
    }

    /// The part lines of the records in a response's body (``RecordsRule``), and the body as
    /// JSON for the captures to reuse.
    private static func records(of response: HTTPResponse, rule: RecordsRule)
        -> (Result<[UInt8], RecordsProblem>, JSONNode?)
    {
        let document: JSONNode
        do {
            document = try JSONParser.parse([UInt8](response.body))
        } catch {
            return (
                .failure(
                    RecordsProblem(
                        message:
                            "the body is not JSON (\(error.message) at line \(error.line), column \(error.column)), so it has no records at \(rule.from)"
                    )), nil
            )
        }
        var lines: [UInt8] = []
        do {
            _ = try rule.partLines(of: document, into: &lines)
        } catch {
            return (.failure(error), document)
        }
        return (.success(lines), document)
    }

    /// Puts a saved output in place under `outputDir`: the streamed file renamed over it, or
    /// the body in memory written; returns the path as logged. Blocking: on a file-work thread.
    /// The folder's sync is left to the caller (``FolderSyncs``): returns the path as logged
    /// and the folder the file was renamed into.
    private func save(
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
