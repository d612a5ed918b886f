import Courier
import Foundation

/// A page judged, without sending or writing anything: the expectations met or not, the values
/// captured, the records and the `since` value found in its body, and the conditional request
/// the next run sends. The page loop (TaskExecution.swift) calls it between the send and the
/// file work.
extension JobRunner {
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

    /// Whether `document` has items where `pointer` (with `*`) looks, but no cursor value at it.
    static func misses(_ pointer: String, in document: JSONNode?) -> Bool {
        guard let document, let star = pointer.range(of: "/*") else { return false }
        let values = JSONPointer.resolveAll(pointer, in: document).compactMap(SinceRule.value)
        guard values.isEmpty else { return false }
        let items = JSONPointer.resolve(String(pointer[..<star.lowerBound]), in: document)
        if case .array(let elements)? = items?.value { return !elements.isEmpty }
        return false
    }

    /// Hands the response's captured values to `store` (the feed); why not, when they cannot
    /// be taken. `parsed`: the body as JSON, when the caller parsed it already.
    func takeCaptures(
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
    static func records(of response: HTTPResponse, rule: RecordsRule)
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
}
