import Courier

/// What follows a good page: the task's `since` value after it and the next page's request.
extension PageJudgement {
    /// The task's state between its pages, as the judgement of the next page needs it.
    struct Position: Sendable {
        /// The pages followed so far (`nil`: a task that does not paginate).
        var paginator: Paginator?
        /// The request the page just judged answered.
        var request: HTTPRequest
        /// The greatest `since` value seen on the pages so far.
        var sinceValue: String?
        /// The `since.max` pointer, once a page had items but no value at it (a misspelt
        /// member name).
        var sinceMissed: String?
        /// The `records.where` pointers some record of the pages so far had a value at, and
        /// whether the pages had records (tombstones aside) at all.
        var whereMatched: Set<String> = []
        var whereHadRecords = false
    }

    /// What comes after a page.
    struct Following: Sendable {
        /// The request for the next page; `nil` when the page was the last.
        var next: HTTPRequest?
        /// Why the pages may have stopped early, when the last looked full.
        var warning: String?
        /// A `since` task that ended without a cursor though its pages had items.
        var sinceNote: String?
        /// A `records.where` pointer no record of the pages had a value at.
        var whereNote: String?
        /// Why the pages cannot go on (a loop), which fails the task.
        var failure: String?
    }

    /// Moves `position` past a good page (`response`; `document`, its body as JSON when the
    /// verdict parsed it): its `since` value, then its next page. A 304 (the first page of a
    /// conditional task) ends the pages: the saved ones stand.
    func following(
        _ response: HTTPResponse, document: JSONNode?, position: inout Position
    ) -> Following {
        var following = Following()
        if let rule = task.since, response.status != 304 {
            position.sinceValue = Self.sinceValue(
                rule, in: response, document: document, after: position.sinceValue)
            if case .max(let pointer) = rule.source, Self.misses(pointer, in: document) {
                position.sinceMissed = pointer
            }
        }
        // The task's own rule: the loop asks this of a judgement made of the task alone.
        if let rule = task.records?.rule, !rule.shaping.conditions.isEmpty, response.status != 304,
            let document
        {
            Self.noteWhere(rule, in: document, position: &position)
        }
        if response.status != 304, var paginator = position.paginator {
            do {
                following.next = try paginator.next(
                    after: response, to: position.request, document: document)
                // The first page's validators are not the next page's.
                if task.conditional {
                    following.next = following.next.map {
                        Self.unconditional($0, as: task.request)
                    }
                }
                position.paginator = paginator
                if case .none = following.next { following.warning = paginator.missingNext }
            } catch {
                following.failure = error.message
                return following
            }
        }
        if case .none = following.next, let pointer = position.sinceMissed,
            position.sinceValue == nil
        {
            // Every run would otherwise quietly fetch everything from `start` again.
            following.sinceNote =
                "since: no value at \(pointer) on a page with items, so the cursor does not move and the next run asks from the same point again"
        }
        if case .none = following.next, position.whereHadRecords,
            let missed = task.records?.rule.shaping.conditions.first(where: {
                !position.whereMatched.contains($0.pointer)
            })
        {
            // A misspelt member kept no record, silently, every night (trial HH2).
            following.whereNote =
                "records.where: no record had a value at \(missed.pointer), so every record was left out; check the pointer"
        }
        return following
    }

    /// Notes which `where` pointers the page's records (tombstones aside) have a value at.
    private static func noteWhere(
        _ rule: RecordsRule, in document: JSONNode, position: inout Position
    ) {
        guard let found = try? rule.records(in: document) else { return }
        let live = found.filter { record in
            rule.deleted.map {
                !RecordsRule.isTombstone(JSONPointer.resolve($0, in: record))
            } ?? true
        }
        guard !live.isEmpty else { return }
        position.whereHadRecords = true
        for condition in rule.shaping.conditions
        where !position.whereMatched.contains(condition.pointer)
            && live.contains(where: { JSONPointer.resolve(condition.pointer, in: $0) != nil })
        {
            position.whereMatched.insert(condition.pointer)
        }
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
}
