import Courier
import Foundation

/// A page's verdict (``PageJudgement``) turned into the page loop's result and file work; the
/// conditional request the next run sends.
extension JobRunner {
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

    /// Adds `If-None-Match`/`If-Modified-Since` from the state, when the saved output is
    /// still there as it was saved, with every page of a listing (a deleted or changed file
    /// must be fetched whole), and the task did not set them.
    static func askIfChanged(
        _ request: inout HTTPRequest, of task: ExpandedTask, state: ConditionalState, save: String
    ) {
        let pages = task.paginate.map { _ in { task.savePath(page: $0) } }
        state.conditions(for: save, page: pages)?.addConditions(to: &request)
    }

    /// After a conditional, paginated task fetched its listing whole: its first page's
    /// validators and how many pages it has, each saved (``ConditionalState/recordListing``).
    func recordListing(
        of task: ExpandedTask, _ validators: HTTPValidators?, pages: Int,
        state: ConditionalState?
    ) {
        guard let validators, let state, let save = task.savePath(page: 1) else { return }
        state.recordListing(validators, pages: pages, for: save) { task.savePath(page: $0) }
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
            /// The `onResponse` action of the rule the final response matched (`ignore`,
            /// `retry`, `fail`), for its line and the run's count of ignored tasks.
            var action: String?
            var failure: (kind: String, message: String)?
            /// File work still to do before the attempt is logged (``completingFiles(_:)``).
            var files: PageFiles?
            /// The body as JSON, parsed once for the records, captures, cursor and next page
            /// that need it (`nil` when none does, or it is not JSON).
            var document: JSONNode?
            /// The records its task kept, once its part is in place (its last page's).
            var recordsKept: Int?
        }

        /// The fields, in one box shared by copies (``CopyOnWrite``).
        private var fields = CopyOnWrite(Fields())

        /// Whether file work waits (``Fields/files``), read without copying it out.
        var hasFiles: Bool { fields.value.files != nil }

        subscript<Value>(dynamicMember path: WritableKeyPath<Fields, Value>) -> Value {
            get { fields.value[keyPath: path] }
            set { fields.value[keyPath: path] = newValue }
        }
    }

    /// Judges an attempt (``PageJudgement``) and hands its captured values to `captures`
    /// (the feed; `nil`: the run takes none); a save it calls for is left in
    /// ``AttemptResult/files`` (not yet `ok`), for ``completingFiles(_:)``.
    ///
    /// - Parameter streamed: where the transport wrote the body, when it went to a file.
    /// - Parameter part: the task's records part, when it writes records (not for a renewal).
    func evaluate(
        _ attempt: RetryAttempt, of task: ExpandedTask, page: Int?,
        captures: (([String], CaptureRule) throws -> Void)?, streamed: FileReplacement?,
        part: RecordsPart? = nil
    ) -> AttemptResult {
        var judgement = PageJudgement(
            task: task, captures: captures == nil ? [] : task.captures(in: job),
            records: part?.target.rule, page: page, scrub: console.redactor.scrub)
        judgement.rules = task.responseRules(in: job)
        judgement.added = part?.target.added ?? []
        var verdict = judgement.verdict(on: attempt)
        if let captures {
            // Captures are handed on before the line that could show them is written, and
            // before anything is saved; a value the feed refuses fails the page.
            for (rule, values) in verdict.captured {
                do {
                    try captures(values, rule)
                } catch {
                    verdict = PageVerdict(
                        failure: ("capture", "\(error)"), document: verdict.document)
                    break
                }
            }
        }
        var result = AttemptResult()
        if let streamed { result.files = PageFiles(streamed: streamed) }
        result.document = verdict.document
        result.failure = verdict.failure
        result.action = verdict.action?.rawValue
        guard verdict.failure == nil, case .success(let response) = attempt.outcome else {
            return result
        }
        result.notModified = verdict.notModified
        result.ok = verdict.isOK
        if let save = verdict.save {
            result.files = PageFiles(
                save: (response, save), task: task.id, streamed: streamed, part: part,
                records: verdict.recordLines)
        } else if let part, let save = verdict.recordsFromSave {
            result.files = PageFiles(streamed: streamed, part: part, recordsFromSave: save)
        } else if let part, !verdict.notModified {
            result.files = PageFiles(streamed: streamed, part: part, records: verdict.recordLines)
        }
        return result
    }

    /// What follows the page just judged and saved, held across the loop's awaits.
    ///
    /// A class: as a value, its request and notes would each take a slot in ``execute``'s
    /// async frame for the whole of every task.
    final class PageStep {
        let following: PageJudgement.Following

        init(_ following: PageJudgement.Following) { self.following = following }

        var next: HTTPRequest? { following.next }

        /// Whether no page follows. (Matched, not compared: `next == nil` took `HTTPRequest`'s
        /// `==`, with two copies of the request.)
        var isLast: Bool {
            if case .none = following.next { true } else { false }
        }
    }

    /// Keeps the cursor of a task that ended ok (its `since` value, or its window's end): at
    /// the run's next write of the cursors, or, for a task with records, once its records are
    /// in their file.
    func keepCursor(_ cursor: PageCursor, of task: ExpandedTask) {
        guard let value = cursor.position.sinceValue else { return }
        if task.records != nil {
            since?.hold(value, for: task.id)
        } else {
            since?.record(value, for: task.id)
        }
    }

    /// Whether a page follows the one just judged and saved (``PageJudgement/following``); a
    /// pagination error fails `result`.
    @inline(never)
    func nextPage(
        _ send: PageSend, of task: ExpandedTask, cursor: PageCursor,
        result: inout AttemptResult
    ) -> PageStep {
        // An ignored page (`onResponse`) ends its task: nothing in it leads on.
        guard result.ok, result.action != ResponseRule.Action.ignore.rawValue,
            case .success(let response)? = send.attempts.withLock({ $0.last })?.outcome
        else { return PageStep(PageJudgement.Following()) }
        let following = PageJudgement(task: task).following(
            response, document: result.document, position: &cursor.position)
        if let failure = following.failure {
            result.ok = false
            result.failure = ("pagination", failure)
        }
        return PageStep(following)
    }
}
