import Courier
@testable import CourierJobs
import Foundation
import Testing

/// Writes that happen once (docs/job-file.md): the key a task derives, what the history says
/// of its writes, and what `--resume` and `replay` decide from it, all without a network.
@Suite("Writes that happen once")
struct WritesOnceTests {
    static func line(_ json: String) -> LogLine {
        LogLine(bytes: Array(json.utf8)[...])!
    }

    static func start(_ task: String, run: String = "r1", method: String = "POST") -> LogLine {
        line(
            #"{"event":"request.start","ts":"2026-11-27T10:00:00.000Z","run":"\#(run)","job":"t","task":"\#(task)","method":"\#(method)","url":"http://h/c"}"#
        )
    }

    static func request(
        _ task: String, run: String = "r1", method: String = "POST", status: Int? = nil,
        error: String? = nil, outcome: String = "failed"
    ) -> LogLine {
        let status = status.map { #","status":\#($0)"# } ?? ""
        let error = error.map { #","error":{"kind":"\#($0)","message":"m"}"# } ?? ""
        return line(
            #"{"event":"request","ts":"2026-11-27T10:00:01.000Z","run":"\#(run)","job":"t","task":"\#(task)","attempt":1,"method":"\#(method)","url":"http://h/c"\#(status)\#(error),"outcome":"\#(outcome)"}"#
        )
    }

    static func fact(_ lines: [LogLine], task: String = "c") -> WriteHistory.Fact? {
        var history = WriteHistory()
        let key = FNV1a.taskKey(job: "t", task: task)
        for line in lines { history.add(line, key: key) }
        return history[key]
    }

    @Test("a write's fact: answered by a 2xx for good, unknown while no answer says more")
    func facts() {
        #expect(Self.fact([Self.start("c")]) == .unknown(run: "r1"))
        #expect(
            Self.fact([Self.start("c"), Self.request("c", status: 201, outcome: "ok")])
                == .answered(run: "r1", status: 201))
        // An answer that failed its expectation still means the server took the write.
        #expect(
            Self.fact([Self.start("c"), Self.request("c", status: 200, error: "expectation")])
                == .answered(run: "r1", status: 200))
        // The server answered, and not with a 2xx: known, not taken.
        #expect(Self.fact([Self.start("c"), Self.request("c", status: 500)]) == nil)
        // Refused before it was sent: known, not taken.
        #expect(Self.fact([Self.start("c"), Self.request("c", error: "connect")]) == nil)
        // A timeout may have reached the server.
        #expect(
            Self.fact([Self.start("c"), Self.request("c", error: "timeout")]) == .unknown(run: "r1")
        )
        // A 2xx stands: a later run cannot undo a write the server took.
        #expect(
            Self.fact([
                Self.request("c", status: 201, outcome: "ok"), Self.start("c", run: "r2"),
                Self.request("c", run: "r2", status: 500),
            ]) == .answered(run: "r1", status: 201))
        // Cancelled in flight (it went out): unknown. Cancelled while it waited for a retry,
        // its host or the rate limit (no `request.start` for it): the earlier attempts'
        // word stands (trial O: a stopped run held the write for good).
        #expect(
            Self.fact([Self.start("c"), Self.request("c", error: "cancelled")])
                == .unknown(run: "r1"))
        #expect(Self.fact([Self.request("c", error: "cancelled")]) == nil)
        #expect(
            Self.fact([
                Self.start("c"), Self.request("c", status: 503),
                Self.request("c", error: "cancelled"),
            ]) == nil)
        #expect(
            Self.fact([
                Self.start("c"), Self.request("c", error: "timeout"),
                Self.request("c", error: "cancelled"),
            ]) == .unknown(run: "r1"))
        // A read says nothing of writes.
        #expect(
            Self.fact([Self.start("c", method: "GET"), Self.request("c", method: "GET")]) == nil)
        #expect(Self.fact([Self.start("c", method: "PUT")]) == nil)
    }

    @Test("the history folds every log's writes, a log-only replay's too, and knows the done ones")
    func historyFolds() {
        var history = TaskHistory()
        history.add(
            Self.line(
                #"{"event":"run.start","ts":"2026-11-27T10:00:00.000Z","run":"r1","job":"t"}"#))
        history.add(Self.start("a"))
        history.add(Self.request("a", status: 201, outcome: "ok"))
        history.add(Self.start("b"))
        history.add(
            Self.line(
                #"{"event":"run.start","ts":"2026-11-27T11:00:00.000Z","run":"r2","job":"t","replayOf":["r1"],"replayFrom":"log"}"#
            ))
        history.add(Self.start("c", run: "r2"))
        history.add(Self.request("c", run: "r2", status: 202, outcome: "ok"))
        let writes = history.writes
        #expect(writes[FNV1a.taskKey(job: "t", task: "a")] == .answered(run: "r1", status: 201))
        #expect(writes[FNV1a.taskKey(job: "t", task: "b")] == .unknown(run: "r1"))
        #expect(writes[FNV1a.taskKey(job: "t", task: "c")] == .answered(run: "r2", status: 202))
        // A log-only replay's ok decides no outcome; the first run's does.
        #expect(writes.done == [FNV1a.taskKey(job: "t", task: "a")])
    }

    @Test(
        "the rule: an answered write is held, an unknown one goes only with its key, a named one goes"
    )
    func rule() {
        let answered = WriteHistory.Fact.answered(run: "r1", status: 201)
        let unknown = WriteHistory.Fact.unknown(run: "r1")
        #expect(WriteRule.decide(task: "c", fact: nil, keyed: false, named: false) == .send)
        guard
            case .hold(let reason) = WriteRule.decide(
                task: "c", fact: answered, keyed: true, named: false)
        else {
            Issue.record("an answered write was not held")
            return
        }
        #expect(reason.contains("answered 201 by run r1"), "\(reason)")
        #expect(reason.contains("--task c"), "\(reason)")
        #expect(
            WriteRule.decide(task: "c", fact: unknown, keyed: true, named: false)
                == .sendWithKey(unknownIn: "r1"))
        guard
            case .hold(let why) = WriteRule.decide(
                task: "c", fact: unknown, keyed: false, named: false)
        else {
            Issue.record("an unknown write without a key was not held")
            return
        }
        #expect(why.contains("idempotencyKey"), "\(why)")
        #expect(WriteRule.decide(task: "c", fact: answered, keyed: false, named: true) == .send)
        #expect(WriteRule.decide(task: "c", fact: unknown, keyed: false, named: true) == .send)
        #expect(WriteRule.names("charge-7"))
        #expect(!WriteRule.names("charge-*"))
        #expect(!WriteRule.names("charge-[12]"))
    }

    static func writeJob(_ body: String, query: String = "", extra: String = "") throws -> Job {
        try ExpansionTests.load(
            ExpansionTests.job(
                tasks: #"""
                    {"id": "charge", "method": "POST", "path": "/charges"\#(query),
                     "json": \#(body), "idempotencyKey": true},
                    {"id": "custom", "method": "PATCH", "path": "/c", "body": "x",
                     "idempotencyKey": {"header": "X-Request-Key"}},
                    {"id": "own", "method": "POST", "path": "/o", "body": "x",
                     "headers": {"Idempotency-Key": "mine-1"}, "idempotencyKey": true},
                    {"id": "login", "method": "POST", "path": "/login", "body": "x", "safe": true}
                    """#, extra: extra),
            environment: ["PASSWORD": "hunter22-secret", "OTHER": "another-secret-value"])
    }

    static func keys(of job: Job) throws -> [String: String] {
        var keys: [String: String] = [:]
        for task in try ExpansionTests.expand(job) {
            let header = task.spec(in: job)?.writes.keyHeader ?? "Idempotency-Key"
            keys[task.id] = task.request.headers[header]
        }
        return keys
    }

    @Test("a task's key: a version 8 UUID, the same for the same write, new for a changed one")
    func derivedKeys() throws {
        let body = #"{"amount": 100, "password": "${env:PASSWORD}"}"#
        let keys = try Self.keys(of: Self.writeJob(body))
        let key = try #require(keys["charge"])
        let uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
        #expect(key.wholeMatch(of: uuid) != nil, "\(key)")
        #expect(try Self.keys(of: Self.writeJob(body))["charge"] == key, "the same write")
        #expect(
            try Self.keys(of: Self.writeJob(#"{"amount": 200, "password": "${env:PASSWORD}"}"#))[
                "charge"] != key, "another body")
        #expect(
            try Self.keys(of: Self.writeJob(body, query: #", "query": {"n": "2"}"#))["charge"]
                != key, "another URL")
        // A rotated secret is the same write: secrets are taken out before hashing.
        #expect(
            try Self.keys(of: Self.writeJob(#"{"amount": 100, "password": "${env:OTHER}"}"#))[
                "charge"] == key, "a rotated secret")
        #expect(keys["custom"]?.wholeMatch(of: uuid) != nil, "the named header carries it")
        #expect(keys["own"] == "mine-1", "the job file's own key is sent as written")
        #expect(keys["login"] == nil, "a safe request gets no key")
    }

    @Test("a key or safe lets a write be retried; safe makes a POST no write")
    func settings() throws {
        let job = try Self.writeJob("1")
        let specs = Dictionary(uniqueKeysWithValues: job.tasks.map { ($0.id, $0) })
        #expect(specs["charge"]?.isWrite == true)
        #expect(specs["charge"]?.retry.retriesNonIdempotent == true)
        #expect(specs["custom"]?.writes.keyHeader == "X-Request-Key")
        #expect(specs["login"]?.isWrite == false)
        #expect(specs["login"]?.retry.retriesNonIdempotent == true)
    }

    @Test("without a safe of its own, a POST that pages or hands a token to auth reads")
    func inferredSafety() throws {
        let job = try ExpansionTests.load(
            ExpansionTests.job(
                tasks: #"""
                    {"id": "login", "method": "POST", "path": "/login", "json": {"u": 1},
                     "capture": {"token": {"json": "/token"}}},
                    {"id": "me", "path": "/me", "auth": {"bearer": "{token}"}},
                    {"id": "search", "method": "POST", "path": "/search", "json": {"page": 1},
                     "paginate": {"next": {"page": {"body": "/page", "start": 1}},
                                  "stopWhen": {"empty": "/items"}}},
                    {"id": "create", "method": "POST", "path": "/orders", "json": {"n": 1},
                     "capture": {"order": {"json": "/id"}}},
                    {"id": "audit", "method": "POST", "path": "/login2", "json": {"u": 1},
                     "capture": {"other": {"json": "/token", "secret": true}}, "safe": false}
                    """#))
        let writes = Dictionary(uniqueKeysWithValues: job.tasks.map { ($0.id, $0.isWrite) })
        #expect(
            writes == ["login": false, "me": false, "search": false, "create": true, "audit": true])
    }

    @Test("selection: a held write is not sent; a done one stays done; a named one is sent")
    func selection() throws {
        let job = try Self.writeJob("1")
        let tasks = Dictionary(
            uniqueKeysWithValues: try ExpansionTests.expand(job).map { ($0.id, $0) })
        var history = TaskHistory()
        history.add(Self.start("charge"))
        history.add(Self.request("charge", status: 201, error: "expectation"))
        history.add(Self.start("custom"))
        var selection = TaskSelection(
            job: "t", shard: nil, done: [], okRuns: [:], chosen: nil, writes: history.writes)
        #expect(
            TaskSelectionTests.said(
                selection.verdict(on: tasks["charge"]!, capturing: false, keying: .key("k")))
                == "hold")
        #expect(
            TaskSelectionTests.said(
                selection.verdict(on: tasks["custom"]!, capturing: false, keying: .key("k")))
                == "send without records, unknown in r1")
        #expect(
            TaskSelectionTests.said(
                selection.verdict(
                    on: tasks["custom"]!, capturing: false, keying: WriteRule.Keying.unkeyed))
                == "hold")
        #expect(
            TaskSelectionTests.said(selection.verdict(on: tasks["custom"]!, capturing: false))
                == "send without records", "not a write")
        selection.named = ["charge"]
        #expect(
            TaskSelectionTests.said(
                selection.verdict(on: tasks["charge"]!, capturing: false, keying: .key("k")))
                == "send without records")
        history.add(Self.request("charge", run: "r2", status: 201, outcome: "ok"))
        selection = TaskSelection(
            job: "t", shard: nil, done: [], okRuns: [:], chosen: nil, writes: history.writes)
        #expect(
            TaskSelectionTests.said(
                selection.verdict(on: tasks["charge"]!, capturing: false, keying: .key("k")))
                == "hold, done")
    }

    static func runStart(_ run: String, replayFromLog: Bool = false) -> LogLine {
        let replay = replayFromLog ? #","replayOf":["r1"],"replayFrom":"log""# : ""
        return line(
            #"{"event":"run.start","ts":"2026-11-27T10:00:00.000Z","run":"\#(run)","job":"t"\#(replay)}"#
        )
    }

    /// A write with a key is known by its key as well as its task: another night's write of
    /// the task (another body, so another key) answered says nothing of this one, which is
    /// sent; the same key answered holds it. A write sent without a key keeps the task's word.
    @Test("a keyed write is judged by its own key's lines, an unkeyed one by its task's")
    func writesByKey() throws {
        let job = try Self.writeJob("1")
        let charge = try #require(try ExpansionTests.expand(job).first { $0.id == "charge" })
        func keyed(_ line: LogLine, _ key: String) -> LogLine {
            var line = line
            line.idempotencyKey = key
            return line
        }
        var nights = TaskHistory()
        nights.add(Self.runStart("r1"))
        nights.add(keyed(Self.start("charge"), "k1"))
        nights.add(keyed(Self.request("charge", status: 503), "k1"))
        nights.add(Self.runStart("r2"))
        nights.add(keyed(Self.start("charge", run: "r2"), "k2"))
        nights.add(keyed(Self.request("charge", run: "r2", status: 201, outcome: "ok"), "k2"))
        func verdict(_ history: TaskHistory, _ key: String) -> WriteRule.Verdict {
            WriteRule.verdict(
                on: charge, of: "t", keying: .key(key), capturing: false,
                writes: history.writes, named: false, choseNone: true)
        }
        #expect(verdict(nights, "k1") == .send, "night 1's write never happened")
        #expect(verdict(nights, "k2") == .doneInHistory)
        var cut = nights
        cut.add(Self.runStart("r3"))
        cut.add(keyed(Self.start("charge", run: "r3"), "k3"))
        #expect(verdict(cut, "k3") == .sendWithKey(unknownIn: "r3"))
        #expect(verdict(cut, "k1") == .send)
        // An older line without a key: the task's word stands for every key.
        var older = TaskHistory()
        older.add(Self.runStart("r0"))
        older.add(Self.start("charge", run: "r0"))
        older.add(Self.request("charge", run: "r0", status: 201, error: "expectation"))
        older.add(Self.runStart("r1"))
        older.add(keyed(Self.start("charge"), "k1"))
        older.add(keyed(Self.request("charge", status: 503), "k1"))
        guard case .hold = verdict(older, "k1") else {
            Issue.record("a write answered without its key was not held")
            return
        }
    }

    /// What a report counts as held agrees with the resume: a keyed write a log-only replay
    /// had answered 2xx is done by that answer or had again with its key, never held (trial
    /// BBB: the report said to name it with --task, and the resume counted it done). One
    /// without a key, which may have more to do, is counted held.
    @Test("a report does not count as held a keyed write a log-only replay had answered")
    func keyedAnsweredByAReplayIsNotHeld() {
        for withKey in [true, false] {
            func keyed(_ line: LogLine) -> LogLine {
                var line = line
                if withKey { line.idempotencyKey = "k1" }
                return line
            }
            var history = TaskHistory()
            history.add(Self.runStart("r1"))
            history.add(keyed(Self.start("charge")))
            history.add(keyed(Self.request("charge", status: 503)))
            history.add(Self.runStart("r2", replayFromLog: true))
            history.add(keyed(Self.start("charge", run: "r2")))
            history.add(keyed(Self.request("charge", run: "r2", status: 201, outcome: "ok")))
            #expect(WriteRule.heldOnRepair(history) == (withKey ? 0 : 1), "key: \(withKey)")
        }
    }

    @Test("one verdict: a log-only replay's 2xx is done by it, or had again with the key")
    func verdict() throws {
        let job = try Self.writeJob("1")
        let charge = try #require(try ExpansionTests.expand(job).first { $0.id == "charge" })
        var replayed = TaskHistory()
        replayed.add(Self.runStart("r1"))
        replayed.add(Self.start("charge"))
        replayed.add(Self.request("charge", status: 503))
        replayed.add(Self.runStart("r2", replayFromLog: true))
        replayed.add(Self.start("charge", run: "r2"))
        replayed.add(Self.request("charge", run: "r2", status: 201, outcome: "ok"))
        func verdict(
            _ history: TaskHistory, keyed: Bool, capturing: Bool, choseNone: Bool = true
        ) -> WriteRule.Verdict {
            WriteRule.verdict(
                on: charge, of: "t", keying: keyed ? .key("k") : .unkeyed, capturing: capturing,
                writes: history.writes,
                named: false, choseNone: choseNone)
        }
        // Nothing else to do: done by that answer.
        #expect(verdict(replayed, keyed: true, capturing: false) == .doneByAnswer)
        // More to do (its captures): had again with its key, or held without one.
        #expect(verdict(replayed, keyed: true, capturing: true) == .sendWithKey(unknownIn: nil))
        guard case .hold = verdict(replayed, keyed: false, capturing: true) else {
            Issue.record("a write answered by a log-only replay, without a key, was not held")
            return
        }
        // Done in the history: done for a resume that chose none, held for one that chose it.
        var done = TaskHistory()
        done.add(Self.runStart("r1"))
        done.add(Self.start("charge"))
        done.add(Self.request("charge", status: 201, outcome: "ok"))
        #expect(verdict(done, keyed: false, capturing: false) == .doneInHistory)
        guard case .hold = verdict(done, keyed: true, capturing: false, choseNone: false) else {
            Issue.record("a replay that chose a done write did not hold it")
            return
        }
        // What `held` says for a dry run agrees: the write had again with its key is sent.
        #expect(
            WriteRule.held(charge, in: job, writes: replayed.writes, named: []) != nil,
            "no captures in this job: done by the answer, not sent")
    }
}
