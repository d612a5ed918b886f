import Courier

/// What one page's final answer means for its task, decided from the answer alone: whether
/// it meets the task's expectations, the values it captures, the records it holds, where it is
/// saved, the task's `since` value after it and the request for the page that follows.
///
/// A pure value, like the retry and redirect decisions: it sends, writes and logs nothing.
/// The page loop (Runner/TaskExecution.swift) sends the page, asks for a ``PageVerdict``, does
/// the file work it names and logs the line; tests judge pages without a network.
struct PageJudgement {
    /// The task the page belongs to.
    var task: ExpandedTask
    /// The captures to take from the page, in the job's order (none when the run takes none).
    var captures: [CaptureRule] = []
    /// The records to find in the page: set for a task that keeps records.
    var records: RecordsRule?
    /// The `add` members of the task's records (``RecordsTarget/added``).
    var added: [(name: String, node: JSONNode)] = []
    /// The page's number as logged: `nil` for a task that does not paginate.
    var page: Int?
    /// Hides the run's secrets in a failed expectation's message.
    var scrub: (String) -> String = { $0 }
    /// The task's `onResponse` rules, which decide before its status and `expect`.
    var rules: [ResponseRule] = []

    /// The verdict on the page's final attempt.
    func verdict(on attempt: RetryAttempt) -> PageVerdict {
        if case .success(let response) = attempt.outcome,
            let (_, rule) = ResponseRule.first(in: rules, matching: response)
        {
            var verdict = PageVerdict()
            verdict.action = rule.action
            if rule.action != .ignore {
                verdict.failure = (
                    "responseAction",
                    rule.failure(
                        status: response.status, attempts: attempt.number,
                        stopReason: attempt.stopReason)
                )
            }
            return verdict
        }
        switch attempt.outcome {
        case .success(let response) where task.accepts(response.status):
            return verdict(on: response, attempt: attempt)
        case .success(let response):
            let expected =
                task.expectStatus.map { $0.sorted().map(String.init).joined(separator: ", ") }
                ?? "2xx"
            var message = "status \(response.status), expected \(expected)"
            if let reason = attempt.stopReason { message += "; \(reason)" }
            return PageVerdict(failure: ("unexpectedStatus", message))
        case .failure(let error):
            return PageVerdict(failure: (error.kind.rawValue, error.message))
        }
    }

    /// The verdict on a response of an accepted status: the rest of `expect`, the captures,
    /// the records, then the save, in that order (the first that fails decides).
    private func verdict(on response: HTTPResponse, attempt: RetryAttempt) -> PageVerdict {
        var verdict = PageVerdict()
        // The body is parsed once, for everything below that reads it.
        if let records, response.status != 304 {
            (verdict.records, verdict.document) = Self.records(
                of: response, rule: records, added: added)
        } else if response.status != 304, task.paginate != nil || task.since != nil {
            verdict.document = try? JSONParser.parse([UInt8](response.body))
        }
        if let reason = task.expectation.failure(
            for: response, durationMs: attempt.duration * 1000, scrub: scrub)
        {
            var message = reason
            if let stop = attempt.stopReason { message += "; \(stop)" }
            verdict.failure = ("expectation", message)
            return verdict
        }
        if let problem = capture(from: response, into: &verdict) {
            verdict.failure = ("capture", problem)
        } else if case .failure(let problem)? = verdict.records {
            verdict.failure = ("records", problem.message)
        } else if response.status == 304 {
            // Not Modified has no body: the saved output stays as it is. A conditional merge
            // takes its records again from the saved copy.
            verdict.notModified = true
            if self.records != nil, task.conditional { verdict.recordsFromSave = task.save }
        } else if let save = task.savePath(page: page) {
            verdict.save = save
        }
        return verdict
    }

    /// Takes the captures' values into `verdict`, rule by rule; why not, at the first that
    /// finds none. A body not parsed yet is parsed here when a capture reads JSON.
    private func capture(from response: HTTPResponse, into verdict: inout PageVerdict) -> String? {
        guard !captures.isEmpty else { return nil }
        let document: JSONNode? =
            captures.contains { if case .json = $0.source { true } else { false } }
            ? verdict.document ?? (try? JSONParser.parse([UInt8](response.body))) : nil
        for rule in captures {
            switch rule.values(in: response, document: document) {
            case .success(let values):
                verdict.captured.append((rule, values))
            case .failure(let problem):
                return problem.message
            }
        }
        return nil
    }

    /// The part lines of the records in a response's body (``RecordsRule``), and the body as
    /// JSON for the captures and the cursor to reuse.
    static func records(
        of response: HTTPResponse, rule: RecordsRule,
        added: [(name: String, node: JSONNode)] = []
    ) -> (Result<[UInt8], RecordsProblem>, JSONNode?) {
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
            _ = try rule.partLines(of: document, added: added, into: &lines)
        } catch {
            return (.failure(error), document)
        }
        return (.success(lines), document)
    }
}

/// What a ``PageJudgement`` found in one page: ok or why not, and the work it leaves to the
/// page loop (captures to hand on, a body to save, records to keep).
struct PageVerdict: Sendable {
    /// Why the page fails its task, when it does.
    var failure: (kind: String, message: String)?
    /// A 304: the saved output stands.
    var notModified = false
    /// The action of the `onResponse` rule the response matched: `ignore` is a good page
    /// with nothing in it to keep, and the task's last.
    var action: ResponseRule.Action?
    /// The values captured, rule by rule in the job's order, up to one that found none.
    var captured: [(rule: CaptureRule, values: [String])] = []
    /// Where the body is to be saved, under `outputDir`, with the page's number in it.
    var save: String?
    /// The page's records as part lines, or why it has none (`nil`: the task keeps none).
    var records: Result<[UInt8], RecordsProblem>?
    /// A 304 of a conditional records task: its records come again from this saved copy.
    var recordsFromSave: String?
    /// The body as JSON, when something read it (`nil` also when it is not JSON).
    var document: JSONNode?

    /// Whether the page is good as it stands: no failure and no save still to make.
    var isOK: Bool { failure == nil && save == nil }

    /// The page's records to keep, when it has some.
    var recordLines: [UInt8]? { try? records?.get() }
}
