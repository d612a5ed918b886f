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
    /// reported finished; a page another follows then has the task's checkpoint written. The file work runs on the run's file-work threads (``FileWork``),
    /// never on the curl loop that runs the task.
    @inline(never)
    func execute(
        _ task: ExpandedTask, shared: AnyHTTPClient, log: RunLog, progress: Progress,
        reporter: FailureReporter, state: ConditionalState?, feed: TaskFeed?,
        tokens: [String: CapturedToken] = [:], oauth2: OAuth2Sessions? = nil
    ) async -> Bool {
        let cursor = firstPage(of: task, state: state)
        let streams = streamsSave(task, capturing: feed != nil)
        let kept =
            feed == nil
            ? nil
            : KeptCaptures.writer(
                for: task, job: job, run: log.run, shard: options.shard, redactor: log.redactor)
        let listing = listing(of: task, capturing: kept != nil)
        let part = recordsPart(of: task, log: log, listing: listing != nil)
        if let listing {
            await resumeListing(listing, of: task, cursor: cursor, part: part, log: log)
        }
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
            if let part, result.ok, step.isLast,
                result.action == ResponseRule.Action.ignore.rawValue,
                part.target.rule.write == .replace
            {
                // Nothing kept (``RecordsLedger/ignored(_:task:)``): no part for a resume to
                // take either.
                recordsLedger?.ignored(part.target, task: task.id)
                await discard(part, keepingListing: false)
            } else if let part, result.ok, step.isLast {
                result = await committing(part, result)
                if result.ok, let index = task.specIndex {
                    recordCounts.withLock { $0[index, default: 0] += part.records }
                }
            }
            if let listing, result.ok, step.isLast {
                await listingDone(listing, of: task, part: part)
            }
            // Before the task's `ok` line, as every validator is (a kill between costs a
            // whole fetch, never a 304 over pages the state does not vouch for).
            if result.ok, step.isLast, !result.notModified, task.conditional, task.paginate != nil {
                let (pages, validators) = (cursor.page, cursor.listingValidators)
                await files.run { [self] in
                    recordListing(of: task, validators, pages: pages, state: state)
                }
            }
            if let kept { await keep(kept, done: result.ok && step.isLast) }
            if let ok = finishPage(
                send, of: task, cursor: cursor, result: result, step: step, log: log,
                progress: progress, reporter: reporter)
            {
                if !ok { await dropUnfinished(part, listing: listing, kept: kept) }
                pruning?.ran(task, pages: cursor.page)
                return ok
            }
            // The page is logged and another follows: the pages so far are kept.
            if let listing {
                await checkpoint(listing, of: task, cursor: cursor, part: part, log: log)
            }
            // A stopping run sends no further page: a resume goes on from the checkpoint.
            if stopping.withLock({ $0 }) {
                progress.requestsSent(cursor.requests)  // they count; the task is not run
                await dropUnfinished(part, listing: listing, kept: kept)
                return false
            }
        }
    }

    /// Sends the page (retries, token renewal); its error, if any (the response: the attempts).
    @inline(never)
    func sent(_ send: PageSend) async -> (any Error)? {
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

    /// Where a task is in its pages.
    ///
    /// A class, like ``PageSend`` and ``AttemptResult``'s fields: what ``execute`` holds across
    /// its awaits lives in the task's async frame, and as values these made that frame 13 KiB
    /// per task in flight (each copy and return value a slot of its own).
    final class PageCursor {
        /// The pages followed so far, the request of the page being sent, the `since` value.
        var position: PageJudgement.Position
        var page = 1
        /// Requests sent for the task so far, every attempt counted.
        var requests = 0
        /// A conditional listing's first page's validators, recorded once every page is saved.
        var listingValidators: HTTPValidators?

        /// The page number as logged: `nil` for a task that does not paginate.
        var logged: Int? { position.paginator == nil ? nil : page }

        init(paginator: Paginator?, request: HTTPRequest) {
            position = PageJudgement.Position(paginator: paginator, request: request)
        }
    }

    /// One page's request and the clients that send it, made before it is sent.
    final class PageSend {
        let request: HTTPRequest
        let retrying: AttemptLoop
        /// The retry layer under a token renewal, when the task's token can be renewed (a
        /// captured login token, or an OAuth2 client's).
        let renewing: AnyHTTPClient?
        let attempts: Locked<PageAttempts>
        let streamed: FileReplacement?

        init(
            request: HTTPRequest, retrying: AttemptLoop,
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
    func firstPage(of task: ExpandedTask, state: ConditionalState?) -> PageCursor {
        var request = task.request
        let page = task.paginate.map { _ in 1 }
        if task.conditional, let state, let save = task.savePath(page: page) {
            Self.askIfChanged(&request, of: task, state: state, save: save)
        }
        let cursor = PageCursor(
            paginator: task.paginate.map { Paginator(rule: $0, first: task.request) },
            request: request)
        // A window's cursor is its end, kept once the task ends ok (its records, if any, in
        // their file first), as a `since` task's value is.
        cursor.position.sinceValue = task.windowEnd
        return cursor
    }

    @inline(never)
    func preparePage(
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
        let rules = task.responseRules(in: job)
        let keyHeader = task.keyHeader(in: job)
        let (safe, digest) = (task.isWrite(in: job) == false, task.writeDigest)
        var writeStart: (@Sendable (HTTPRequest) -> Void)?
        if WriteRule.keying(task, in: job) != nil {
            writeStart = { request in
                try? log.requestStart(
                    task: taskID, request: request, page: pageNumber, keyHeader: keyHeader,
                    digest: digest)
            }
        }
        let retrying = HTTPStack.retrying(
            shared, task: task, time: requestTime, hosts: hosts,
            rateLimited: job.rateLimit != nil || job.sharedHosts,
            rules: rules, writeStart: writeStart, trace: options.trace
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
                    AttemptRecord(
                        task: taskID, attempt: attempt, outcome: .retry, page: pageNumber,
                        replayOf: replayOf, action: Self.action(of: attempt, rules: rules),
                        waits: waits, keyHeader: keyHeader, safe: safe, requestDigest: digest))
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
                    AttemptRecord(
                        task: taskID, attempt: rejected, outcome: .retry, page: pageNumber,
                        replayOf: replayOf, renewedToken: name, waits: waits, safe: safe,
                        requestDigest: digest))
            }
        }
        let renewing =
            renewing(retrying, for: task, tokens: tokens, willResend: willResend)
            ?? authorizing(retrying, for: task, sessions: oauth2, willResend: willResend)
        var request = cursor.position.request
        if let streamed { request.bodyDestination = .file(streamed.temporary) }
        return PageSend(
            request: request, retrying: retrying, renewing: renewing, attempts: attempts,
            streamed: streamed)
    }

    /// Judges the page just sent: whether it is ok, and the file work it still needs (its
    /// save, the conditional state's record, a temporary to remove), which the caller has
    /// done off the loop before ``finishPage``.
    @inline(never)
    func judgePage(
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
        // Of a paginated task, the first page's, once every page is (the next run asks for
        // it first, and its 304 keeps them all).
        if let saved = result.files?.save, task.conditional, let state, cursor.page == 1 {
            if task.paginate == nil {
                result.files?.record = (state, saved.path)
            } else {
                cursor.listingValidators = HTTPValidators(saved.response.headers)
            }
            if HTTPValidators(saved.response.headers).isEmpty {
                noteMissingValidators(of: task)
            }
        }
        return result
    }

    /// The `onResponse` action of the rule an attempt's response matched, for its line.
    static func action(of attempt: RetryAttempt, rules: [ResponseRule]) -> String? {
        guard !rules.isEmpty, case .success(let response) = attempt.outcome else { return nil }
        return ResponseRule.first(in: rules, matching: response)?.rule.action.rawValue
    }

    /// Logs the page just judged and saved; moves the cursor to the next page and returns
    /// `nil` when there is one, or whether the task succeeded.
    @inline(never)
    func finishPage(
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
        // An `ignore` after the first page cut the listing short (trial NNN: a 404 on page 2
        // moved a `since` cursor past every row never fetched): its cursor stays.
        let cut =
            result.action == ResponseRule.Action.ignore.rawValue && (pageNumber ?? 1) > 1
            && (task.since != nil || task.windowEnd != nil)
        let notes = [
            step.following.sinceNote, step.following.whereNote, cut ? ResponseRule.cutNote : nil,
        ]
        .compactMap { $0 }
        let warning = ([step.following.warning].compactMap { $0 } + notes).joined(separator: "; ")
        let outcome: LogOutcome = !result.ok ? .failed : step.isLast ? .ok : .page
        try? log.request(
            AttemptRecord(
                task: task.id, attempt: attempt, outcome: outcome, page: pageNumber,
                savedTo: result.savedTo, failure: attempt.outcome.isFailure ? nil : result.failure,
                replayOf: task.replayOf, notModified: result.notModified,
                warning: warning.isEmpty ? nil : warning, action: result.action, waits: waits,
                keyHeader: task.keyHeader(in: job), safe: task.isWrite(in: job) == false,
                requestDigest: task.writeDigest, recordsKept: result.recordsKept))
        // Not under --quiet, which promises silence when every task succeeds: the warning is
        // in the log line, `requireNext` fails the task instead, and a data check fails the run.
        if let warning = step.following.warning, !options.quiet {
            reporter.report("warning: task \(task.id) may have stopped early: \(warning)")
        }
        for note in notes where !options.quiet {
            reporter.report("warning: task \(task.id): \(note)")
        }
        guard result.ok, let next else {
            // Every page was fine: the cursor may move (at the run's next write of it).
            if result.ok, !cut { keepCursor(cursor, of: task) }
            // Each page's final attempt is one request; the others were retried, and a
            // failed task's final attempt failed too.
            progress.taskFinished(
                ok: result.ok, requests: cursor.requests, notModified: result.notModified,
                ignored: result.ok && result.action == ResponseRule.Action.ignore.rawValue,
                unsuccessful: max(0, cursor.requests - cursor.page) + (result.ok ? 0 : 1))
            if !result.ok, let failure = result.failure {
                let onPage = pageNumber.map { " on page \($0)" } ?? ""
                // A reason that names its request's URL is grouped by the rest: a rehearsal's
                // 141 requests not in the recording read as 141 reasons (trial BB).
                let url = attempt.request.displayURL.absoluteString
                reporter.failed(
                    task: task.id,
                    context:
                        "\(onPage) after \(attempt.number) attempt\(attempt.number == 1 ? "" : "s")",
                    reason: failure.message,
                    general: failure.message.replacingOccurrences(of: url, with: "(its URL)"))
            }
            return result.ok
        }
        cursor.position.request = next
        cursor.page += 1
        return nil
    }

    /// The final attempt of one page, and how far its attempts are renumbered: after a
    /// rejected token was renewed, the retry layer counts from 1 again, and the log goes on.
    struct PageAttempts {
        var last: RetryAttempt?
        var renumbering = 0
        /// What the final attempt waited before it was sent.
        var waits = AttemptWaits()
    }
}
