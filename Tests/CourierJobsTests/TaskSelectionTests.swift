import Courier
@testable import CourierJobs
import Foundation
import Testing

/// Which tasks a run sends, decided without a run: shards, a resume's history, a replay's or
/// `--task` run's choice, each alone and together.
@Suite("Task selection")
struct TaskSelectionTests {
    /// The job's tasks: `plain-1`…`plain-4` (records), and `login` (captures a token).
    static func tasks() throws -> [String: ExpandedTask] {
        let job = try ExpansionTests.load(
            ExpansionTests.job(
                tasks: #"""
                    {"id": "login", "path": "/login", "capture": {"token": {"json": "/token"}}},
                    {"id": "plain-{n}", "path": "/p/{n}", "foreach": {"n": {"range": [1, 4]}},
                     "records": {"from": "/items/*", "to": "r.jsonl", "write": "append"}}
                    """#))
        let tasks = try ExpansionTests.expand(job)
        return Dictionary(uniqueKeysWithValues: tasks.map { ($0.id, $0) })
    }

    static func key(_ id: String) -> UInt64 { FNV1a.taskKey(job: "t", task: id) }

    static func selection(
        shard: Shard? = nil, done: Set<String> = [], okRuns: [String: String] = [:],
        globs: [String]? = nil, needed: Set<Int> = [0]
    ) -> TaskSelection {
        TaskSelection(
            job: "t", shard: shard, done: Set(done.map(key)),
            okRuns: Dictionary(uniqueKeysWithValues: okRuns.map { (key($0.key), $0.value) }),
            chosen: globs.map { ReplaySelection(job: "t", globs: $0) }, needed: needed)
    }

    /// The verdict in words, for comparing.
    static func said(_ verdict: TaskSelection.Verdict) -> String {
        switch verdict {
        case .otherShard(let counted): "other shard" + (counted ? "" : ", not counted")
        case .done(let found): "done" + (found ? ", found" : "")
        case .reuseKept(let run): "reuse \(run)"
        case .notChosen: "not chosen"
        case .send(let send):
            "send" + (send.task.records == nil ? " without records" : "")
                + (send.recordsSettled.map { $0 == .done ? ", done" : ", by history" } ?? "")
                + (send.found ? ", found" : "")
                + (send.unknownIn.map { ", unknown in \($0)" } ?? "")
        case .hold(_, _, let done, _): "hold" + (done ? ", done" : "")
        case .doneByAnswer(let found, _): "done by answer" + (found ? ", found" : "")
        }
    }

    /// A write a replay from the log alone sent, answered 2xx on an `ok` line: the history
    /// does not count it done (such a replay saves nothing, checks nothing), and every repair
    /// held it for ever (trial S). With nothing else to do it is done by that answer; one that
    /// saves its answer, captures or expects more stays held.
    @Test func aWriteALogOnlyReplaySentIsDoneByItsAnswerWhenItHasNothingElseToDo() throws {
        let job = try ExpansionTests.load(
            ExpansionTests.job(
                tasks: #"""
                    {"id": "charge", "method": "POST", "path": "/c", "json": {"a": 1}},
                    {"id": "saved", "method": "POST", "path": "/s", "json": {"a": 1}, "save": "s.json"},
                    {"id": "checked", "method": "POST", "path": "/k", "json": {"a": 1},
                     "expect": {"json": {"/paid": true}}}
                    """#))
        let tasks = Dictionary(
            uniqueKeysWithValues: try ExpansionTests.expand(job).map { ($0.id, $0) })
        var selection = Self.selection()
        for id in ["charge", "saved", "checked"] {
            var line = LogLine.made(LogEvent.request, run: "replayed", task: id, outcome: "ok")
            line.method = "POST"
            line.status = 201
            selection.writes.add(line, key: Self.key(id))
        }
        func said(_ id: String, capturing: Bool = false) -> String {
            Self.said(
                selection.verdict(
                    on: tasks[id]!, capturing: capturing, keying: WriteRule.Keying.unkeyed))
        }
        #expect(said("charge") == "done by answer")
        #expect(said("charge", capturing: true) == "hold")
        #expect(said("saved") == "hold")
        #expect(said("checked") == "hold")
        // Done in the history already: a held write counted done, as before.
        selection.writes.done = [Self.key("charge")]
        #expect(said("charge") == "hold, done")
    }

    @Test func aPlainRunSendsEveryTaskAsItIs() throws {
        let tasks = try Self.tasks()
        let selection = Self.selection()
        #expect(Self.said(selection.verdict(on: tasks["plain-1"]!, capturing: false)) == "send")
        #expect(
            Self.said(selection.verdict(on: tasks["login"]!, capturing: true))
                == "send without records")
    }

    @Test func aShardSendsItsOwnTasksAndEveryTaskThatCaptures() throws {
        let tasks = try Self.tasks()
        for count in [2, 3] {
            var owners: [String: Int] = [:]
            for index in 0..<count {
                let selection = Self.selection(
                    shard: try #require(Shard(index: index, count: count)))
                for id in (1...4).map({ "plain-\($0)" }) {
                    if case .send = selection.verdict(on: tasks[id]!, capturing: false) {
                        owners[id, default: 0] += 1
                    }
                }
                #expect(
                    Self.said(selection.verdict(on: tasks["login"]!, capturing: true))
                        == "send without records")
            }
            #expect(owners.count == 4 && owners.values.allSatisfy { $0 == 1 }, "\(owners)")
        }
    }

    /// A `--task` run counts a task a pattern chose only once it is found: another shard's
    /// must not be taken off its total (a trial saw "-8 tasks, 2 ok, -10 failed").
    @Test func anotherShardsTaskIsTakenOffTheTotalOnlyWhenTheTotalCountedIt() throws {
        let tasks = try Self.tasks()
        let shard = try #require(Shard(index: 0, count: 2))
        let others = (1...4).map { "plain-\($0)" }.filter { !shard.owns(taskID: $0) }
        let other = try #require(others.first, "some task is another shard's")
        let whole = Self.selection(shard: shard)
        #expect(Self.said(whole.verdict(on: tasks[other]!, capturing: false)) == "other shard")
        let patterns = Self.selection(shard: shard, globs: ["plain-*"])
        #expect(
            Self.said(patterns.verdict(on: tasks[other]!, capturing: false))
                == "other shard, not counted")
        // Chosen by its id, it was counted before the run: taken off, and settled (not one
        // the job no longer builds).
        let logged = try #require(
            LogLine(
                bytes: ArraySlice(
                    #"{"event":"request","ts":"2026-11-22T04:15:21.147Z","run":"r1","job":"t","task":"\#(other)","outcome":"failed"}"#
                        .utf8)))
        let named = TaskSelection(
            job: "t", shard: shard, done: [], okRuns: [:],
            chosen: ReplaySelection(job: "t", lines: [logged], overrides: [], pace: nil))
        #expect(Self.said(named.verdict(on: tasks[other]!, capturing: false)) == "other shard")
        #expect(named.chosen?.unmatchedCount == 0)
    }

    @Test func aResumeLeavesWhatWasDoneAndReusesKeptCaptures() throws {
        let tasks = try Self.tasks()
        let selection = Self.selection(done: ["plain-1", "login"], okRuns: ["login": "r1"])
        #expect(Self.said(selection.verdict(on: tasks["plain-1"]!, capturing: false)) == "done")
        #expect(Self.said(selection.verdict(on: tasks["plain-2"]!, capturing: false)) == "send")
        #expect(Self.said(selection.verdict(on: tasks["login"]!, capturing: true)) == "reuse r1")
        // Its kept values could not be had: sent again, as any capturing task.
        #expect(
            Self.said(selection.sending(tasks["login"]!, capturing: true)) == "send without records"
        )
    }

    @Test func aDoneRecordsTaskSentForItsCapturesKeepsItsEarlierRecords() throws {
        let tasks = try Self.tasks()
        let selection = Self.selection(done: ["plain-3"])
        // As if plain-3 captured (a records task that also hands values on).
        #expect(
            Self.said(selection.verdict(on: tasks["plain-3"]!, capturing: true))
                == "send without records, done")
    }

    @Test func aTaskRunSendsTheChosenAndWhatTheyNeed() throws {
        let tasks = try Self.tasks()
        let selection = Self.selection(globs: ["plain-2"])
        #expect(
            Self.said(selection.verdict(on: tasks["plain-2"]!, capturing: false)) == "send, found")
        #expect(
            Self.said(selection.verdict(on: tasks["plain-1"]!, capturing: false)) == "not chosen")
        #expect(
            Self.said(selection.verdict(on: tasks["login"]!, capturing: true))
                == "send without records, by history, found")
        #expect(selection.claims("plain-2") == (true, true))
        #expect(selection.claims("plain-4") == (false, false))
        #expect(selection.chosen?.unmatched == [])
        // The login's token is what they need (`needed`: the specs whose captures the chosen
        // ones take); when they take nothing it captures, it is not sent.
        let needsNothing = Self.selection(globs: ["plain-2"], needed: [])
        #expect(
            Self.said(needsNothing.verdict(on: tasks["login"]!, capturing: true)) == "not chosen")
    }

    /// The specs a selection needs: those that capture what the chosen ones take, directly
    /// or through another capture; a fan-out's source counts.
    @Test func theNeededProducersFollowTheCaptures() throws {
        let job = try ExpansionTests.load(
            ExpansionTests.job(
                tasks: #"""
                    {"id": "login", "path": "/login", "capture": {"token": {"json": "/token"}}},
                    {"id": "list", "path": "/list", "headers": {"X-T": "{token}"},
                     "capture": {"ids": {"json": "/ids/*"}}},
                    {"id": "item-{id}", "path": "/i/{id}", "foreach": {"id": {"capture": "ids"}}},
                    {"id": "other", "path": "/o"},
                    {"id": "stats", "path": "/s", "capture": {"n": {"json": "/n"}}}
                    """#))
        func needed(_ globs: [String]) -> Set<Int> {
            ReplaySelection(job: job.name, globs: globs).neededProducers(in: job)
        }
        #expect(needed(["item-3"]) == [0, 1])
        #expect(needed(["item-*"]) == [0, 1])
        #expect(needed(["list"]) == [0])
        #expect(needed(["other"]) == [])
        #expect(needed(["*"]) == [0, 1])
    }

    /// A done task that captures, whose run kept its values: a `--task` run that names it sends
    /// it; one that does not name it takes the kept values. `--resume --task` counts a done
    /// task only when it chose it.
    @Test func aTaskRunSendsADoneCapturingTaskItNames() throws {
        let tasks = try Self.tasks()
        let named = Self.selection(okRuns: ["login": "r1"], globs: ["login"])
        #expect(
            Self.said(named.verdict(on: tasks["login"]!, capturing: true))
                == "send without records, found")
        let other = Self.selection(okRuns: ["login": "r1"], globs: ["plain-2"])
        #expect(Self.said(other.verdict(on: tasks["login"]!, capturing: true)) == "reuse r1")
        let resume = Self.selection(done: ["plain-1", "plain-2"], globs: ["plain-2"])
        #expect(Self.said(resume.verdict(on: tasks["plain-1"]!, capturing: false)) == "not chosen")
        #expect(Self.said(resume.verdict(on: tasks["plain-2"]!, capturing: false)) == "done, found")
    }

    /// `--resume --task` and a done task that captures what no chosen task not done takes
    /// (``ResumeNeeds``): chosen by a pattern, it is done; not chosen, settled (its kept values
    /// handed on by the run); named by its id, sent as asked.
    @Test func aResumeOfChosenTasksLeavesAnUnneededDoneProducer() throws {
        let tasks = try Self.tasks()
        func verdict(_ globs: [String], named: Set<String> = []) -> String {
            var selection = Self.selection(done: ["login"], globs: globs)
            selection.resumeNeeded = []
            selection.named = named
            return Self.said(selection.verdict(on: tasks["login"]!, capturing: true))
        }
        #expect(verdict(["plain-*"]) == "not chosen")
        #expect(verdict(["log*"]) == "done, found")
        #expect(verdict(["login"], named: ["login"]) == "send without records, found")
    }

    @Test func aShardOfATaskRunSendsOnlyItsOwnChosenTasks() throws {
        let tasks = try Self.tasks()
        let chosenEverywhere = (0..<2).map { index in
            let selection = Self.selection(
                shard: Shard(index: index, count: 2)!, globs: ["plain-*"])
            return (1...4).filter {
                if case .send = selection.verdict(on: tasks["plain-\($0)"]!, capturing: false) {
                    return true
                }
                return false
            }
        }
        #expect(chosenEverywhere.flatMap { $0 }.sorted() == [1, 2, 3, 4])
    }

}
