import Courier
import Foundation
import Testing

@testable import CourierJobs

#if canImport(Glibc)
    import Glibc
#endif

/// What a commit killed half-way leaves (``RecordsCommit``), set up by hand: the parts, the
/// `commit` record, and the file with or without the rename. The next commit must neither add
/// a part twice nor lose one.
@Suite("records commit recovery")
struct RecordsCommitTests {
    static let target = RecordsTarget(
        rule: RecordsRule(from: "/items/*", to: "users.jsonl", write: .append), path: "users.jsonl")

    /// Writes a part of `task` by `run` holding `lines`.
    static func part(
        _ store: RecordsStore, task: String, run: String, lines: [String], settings: String? = nil
    ) throws {
        let folder = store.folder(for: target.path)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let header = RecordsStore.Header(
            task: task, target: target.path, settings: settings ?? target.rule.settings)
        var bytes = header.line
        for line in lines { bytes += Array((line + "\n").utf8) }
        try Data(bytes).write(
            to: folder.appendingPathComponent(store.partName(task: task, run: run)))
    }

    /// A `commit` record naming `runs`, for the file now at `users.jsonl` (or, with
    /// `renamed: false`, for a new file that never replaced it).
    static func record(
        _ store: RecordsStore, runs: [String], renamed: Bool, parts: [String]? = nil
    ) throws {
        var status = stat()
        stat(store.outputDir.appendingPathComponent("users.jsonl").path, &status)
        let inode = Int(truncatingIfNeeded: status.st_ino) + (renamed ? 0 : 1)
        let text =
            #"{"target":"users.jsonl","run":"r1","runs":[\#(runs.map { "\"\($0)\"" }.joined(separator: ","))],"device":\#(Int(truncatingIfNeeded: status.st_dev)),"inode":\#(inode),"size":\#(Int(status.st_size))\#(parts.map { #","parts":["# + $0.map { "\"\($0)\"" }.joined(separator: ",") + "]" } ?? "")}"#
        try Data(text.utf8).write(
            to: store.folder(for: target.path).appendingPathComponent(RecordsStore.commitName))
    }

    /// Commits as run `r2` completing `r1`, whose done `tasks` are given; `ran` are r2's own.
    static func commit(
        _ store: RecordsStore, done tasks: [String], ran: [String] = [], notes: Locked<[String]>
    ) -> RecordsCommit.Outcome {
        let ledger = RecordsLedger(job: ReplayCommand.syntheticJob(name: "j", secrets: []))
        for task in ran { ledger.ended(target, task: task, ok: true) }
        for task in tasks {
            ledger.done(target, key: FNV1a.taskKey(job: "j", task: task))
        }
        let commit = RecordsCommit(
            store: store, run: "r2",
            history: RecordsCommit.Earlier(
                runs: ["r1"], done: Set(tasks.map { FNV1a.taskKey(job: "j", task: $0) })),
            temporaries: StaleTemporaries(tag: "0badc0de") { _, _ in },
            limits: RecordsMerge.Limits()
        ) { note in notes.withLock { $0.append(note) } }
        return commit.commit(ledger)
    }

    static func contents(_ store: RecordsStore) -> String? {
        try? String(
            contentsOf: store.outputDir.appendingPathComponent("users.jsonl"), encoding: .utf8)
    }

    static func leftovers(_ store: RecordsStore) -> [String] {
        (try? FileManager.default.contentsOfDirectory(
            atPath: store.folder(for: target.path).path)) ?? []
    }

    @Test("killed after the rename: the parts are in the file, and are removed, not added again")
    func afterRename() throws {
        let folder = try RecordsMergeTests.Scratch()
        let store = RecordsStore(outputDir: folder.folder, job: "j")
        try Self.part(store, task: "t1", run: "r1", lines: [#"{"id":1}"#])
        try Data("old\n{\"id\":1}\n".utf8).write(
            to: folder.folder.appendingPathComponent("users.jsonl"))
        try Self.record(store, runs: ["r1"], renamed: true)
        let notes = Locked<[String]>([])
        let outcome = Self.commit(store, done: ["t1"], notes: notes)
        #expect(Self.contents(store) == "old\n{\"id\":1}\n", "not appended twice")
        #expect(outcome.committed.isEmpty && outcome.failures.isEmpty)
        #expect(Self.leftovers(store).isEmpty, "\(Self.leftovers(store))")
        #expect(notes.withLock { $0 }.count == 1)
    }

    @Test("killed before the rename: the record is forgotten and the parts go into the file once")
    func beforeRename() throws {
        let folder = try RecordsMergeTests.Scratch()
        let store = RecordsStore(outputDir: folder.folder, job: "j")
        try Self.part(store, task: "t10", run: "r1", lines: [#"{"id":10}"#])
        try Self.part(store, task: "t2", run: "r1", lines: [#"{"id":2}"#, #"{"id":3}"#])
        // Not done by the history (it failed there): left out, then removed with the rest.
        try Self.part(store, task: "t5", run: "r1", lines: [#"{"id":5}"#])
        // Written under other settings (the job changed since): left out.
        try Self.part(store, task: "t2", run: "r0", lines: [#"{"id":0}"#], settings: "merge /x ")
        try Data("old\n".utf8).write(to: folder.folder.appendingPathComponent("users.jsonl"))
        try Self.record(store, runs: ["r1"], renamed: false)
        let notes = Locked<[String]>([])
        let outcome = Self.commit(store, done: ["t10", "t2"], notes: notes)
        #expect(Self.contents(store) == "old\n{\"id\":2}\n{\"id\":3}\n{\"id\":10}\n")
        #expect(outcome.committed.map(\.tasks) == [["t2", "t10"]], "the ids committed, in order")
        #expect(outcome.committed.first?.records == 4)
        #expect(Self.leftovers(store).isEmpty, "\(Self.leftovers(store))")
        #expect(notes.withLock { $0 }.isEmpty)
    }

    @Test("another run's part of a task the file did not take stays, for that run's --resume")
    func othersPartsStay() throws {
        let folder = try RecordsMergeTests.Scratch()
        let store = RecordsStore(outputDir: folder.folder, job: "j")
        try Self.part(store, task: "t1", run: "r2", lines: [#"{"id":1}"#])
        // A failed backfill's held parts: one of a task this run did afresh, one of another.
        try Self.part(store, task: "t1", run: "b1", lines: [#"{"id":"old"}"#])
        try Self.part(store, task: "t7", run: "b1", lines: [#"{"id":7}"#])
        let notes = Locked<[String]>([])
        let outcome = Self.commit(store, done: [], ran: ["t1"], notes: notes)
        #expect(
            Self.contents(store) == "{\"id\":1}\n", "\(String(describing: Self.contents(store)))")
        #expect(outcome.committed.map(\.tasks) == [["t1"]])
        #expect(Self.leftovers(store) == [store.partName(task: "t7", run: "b1")])
        // Killed after the rename of the next commit: its record names the parts it spent,
        // and only those go.
        try Self.part(store, task: "t3", run: "r3", lines: [#"{"id":3}"#])
        let spent = store.partName(task: "t3", run: "r3")
        try Self.record(store, runs: ["r3", "b1"], renamed: true, parts: [spent])
        _ = Self.commit(store, done: [], ran: ["t3"], notes: notes)
        #expect(Self.leftovers(store) == [store.partName(task: "t7", run: "b1")])
        #expect(notes.withLock { $0 }.count == 1)
    }

    @Test("replace refuses to drop the records of a task whose part is gone")
    func replaceNeedsEveryPart() throws {
        let folder = try RecordsMergeTests.Scratch()
        let store = RecordsStore(outputDir: folder.folder, job: "j")
        let replace = RecordsTarget(
            rule: RecordsRule(from: "/items/*", to: "users.jsonl", write: .replace),
            path: "users.jsonl")
        let header = RecordsStore.Header(
            task: "t1", target: "users.jsonl", settings: replace.rule.settings)
        let partFolder = store.folder(for: "users.jsonl")
        try FileManager.default.createDirectory(at: partFolder, withIntermediateDirectories: true)
        try Data(header.line + Array("{\"id\":1}\n".utf8)).write(
            to: partFolder.appendingPathComponent(store.partName(task: "t1", run: "r2")))
        try Data("kept\n".utf8).write(to: folder.folder.appendingPathComponent("users.jsonl"))
        let ledger = RecordsLedger(job: ReplayCommand.syntheticJob(name: "j", secrets: []))
        ledger.ended(replace, task: "t1", ok: true)
        ledger.done(replace, key: FNV1a.taskKey(job: "j", task: "t9"))
        let commit = RecordsCommit(
            store: store, run: "r2", history: RecordsCommit.Earlier(runs: ["r1"], done: []),
            temporaries: StaleTemporaries(tag: "0badc0de") { _, _ in },
            limits: RecordsMerge.Limits()
        ) { _ in }
        let outcome = commit.commit(ledger)
        #expect(outcome.failures.count == 1)
        #expect(outcome.failures.first?.contains("replace needs every task's") == true)
        #expect(Self.contents(store) == "kept\n")
    }
}
