import Courier
@testable import CourierJobs
import Foundation
import Testing

/// The documents under `.courier/` in one format: what is written reads back the same, a later
/// format is refused with its reason, and each kind of document goes through it.
@Suite("State documents")
struct StateDocumentTests {
    static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-state-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test func membersRoundTripAfterTheVersion() throws {
        let bytes = StateDocument.bytes([
            ("cursors", .object([("a", .string("2021-01-01T00:00:00Z"))])), ("n", .int(3)),
        ])
        #expect(String(decoding: bytes, as: UTF8.self).hasPrefix(#"{"version":1,"#))
        let members = try StateDocument.members(of: bytes, kind: "cursor file").get()
        #expect(members.map(\.key) == ["cursors", "n"])
        guard case .number(let number)? = members.last?.node.value else {
            Issue.record("n is not a number")
            return
        }
        #expect(number == 3)
    }

    @Test func aLaterFormatIsRefusedWithItsReason() {
        let bytes = Array(#"{"version": 2, "cursors": {}}"#.utf8)
        let result = StateDocument.members(of: bytes, kind: "cursor file")
        guard case .failure(let problem) = result else {
            Issue.record("a format-2 document was read")
            return
        }
        #expect(problem.reason.contains("format 2, written by a later courier"))
    }

    @Test(arguments: [#"[]"#, #"{"version": "1"}"#, "not json", ""])
    func whatCourierDidNotWriteIsRefused(text: String) {
        #expect(throws: StateDocument.Unreadable.self) {
            try StateDocument.members(of: Array(text.utf8), kind: "state file").get()
        }
    }

    @Test func aDocumentWithoutAVersionReadsAsTheFirstFormat() throws {
        // The commit records written before the format had a version.
        let bytes = Array(#"{"target": "r.jsonl", "size": 12}"#.utf8)
        let members = try StateDocument.members(of: bytes, kind: "commit record").get()
        #expect(members.map(\.key) == ["target", "size"])
    }

    @Test func noFileIsNoDocumentAndAFolderIsUnreadable() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(
            StateDocument.read(folder.appendingPathComponent("none"), kind: "state file") == nil)
        guard case .failure(let problem)? = StateDocument.read(folder, kind: "state file") else {
            Issue.record("a folder read as a document")
            return
        }
        #expect(problem.reason.contains("cannot be read"))
    }

    @Test func theCursorsGoThroughItBothWays() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = SinceState.location(outputDir: folder.path)
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(
            StateDocument.bytes([
                ("cursors", .object([("t1", .string("5")), ("t2", .string("2020"))]))
            ])
        ).write(to: url)
        #expect(try SinceState.load(url).get() == ["t1": "5", "t2": "2020"])
        try Data(#"{"version": 9, "cursors": {"t1": "6"}}"#.utf8).write(to: url)
        #expect(throws: StateDocument.Unreadable.self) { try SinceState.load(url).get() }
    }

    @Test("kept captures: a header of a later format is no kept file, and the task is sent again")
    func keptCapturesHeader() throws {
        let outputs = try Self.folder()
        defer { try? FileManager.default.removeItem(at: outputs) }
        let job = try ExpansionTests.load(
            ExpansionTests.job(
                tasks: #"{"id": "login", "path": "/l", "capture": {"token": {"json": "/t"}}}"#,
                extra: #""outputDir": "\#(outputs.path)","#))
        let folder = KeptCaptures.folder(outputDir: job.outputDir)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent(
            KeptCaptures.fileName(job: job.name, task: "login"))
        let values = #"{"capture":"token","values":["abc"]}"# + "\n"
        let header = String(
            decoding: StateDocument.bytes([("run", .string("r1")), ("task", .string("login"))]),
            as: UTF8.self)
        try Data((header + "\n" + values).utf8).write(to: file)
        let kept = try #require(KeptCaptures.load(job: job, task: "login", run: "r1"))
        #expect(kept.map(\.capture) == ["token"] && kept.first?.values == ["abc"])
        try Data((#"{"version":2,"run":"r1","task":"login"}"# + "\n" + values).utf8).write(to: file)
        #expect(KeptCaptures.load(job: job, task: "login", run: "r1") == nil)
    }

    /// A listing checkpoint reads back as written, through the file; one of another task, a
    /// later format or a missing member is not taken.
    @Test func aListingCheckpointRoundTrips() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let listings = ListingCheckpoints(outputDir: folder.path, job: "nightly")
        let checkpoint = ListingCheckpoint(
            task: "users é", run: "0a1b2c3d", first: "00ff00ff00ff00ff",
            pages: Paginator.Checkpoint(pages: 479, itemsSeen: 47_900, step: #"{"c":"x\"y"}"#),
            since: "2026-11-27T00:00:00Z",
            records: ListingCheckpoint.Records(
                file: "0123456789abcdef/k.0a1b2c3d.listing", bytes: 123_456, count: 47_900,
                hash: "0123456789abcdef"))
        #expect(listings.read(task: checkpoint.task) == nil, "none yet")
        try listings.write(checkpoint, temporaries: StaleTemporaries { _, _ in })
        #expect(try listings.read(task: checkpoint.task)?.get() == checkpoint)
        var bare = checkpoint
        (bare.since, bare.records) = (nil, nil)
        try listings.write(bare, temporaries: StaleTemporaries { _, _ in })
        #expect(try listings.read(task: checkpoint.task)?.get() == bare)

        // Written under another task's name: refused, not taken for this task.
        try FileManager.default.copyItem(
            at: listings.url(for: checkpoint.task), to: listings.url(for: "other"))
        #expect(throws: StateDocument.Unreadable.self) { try listings.read(task: "other")?.get() }
        let later = Array(#"{"version": 2, "task": "users é"}"#.utf8)
        try Data(later).write(to: listings.url(for: checkpoint.task))
        #expect(throws: StateDocument.Unreadable.self) {
            try listings.read(task: checkpoint.task)?.get()
        }
        let members = try StateDocument.members(
            of: Array(#"{"version": 1, "task": "t", "run": "r", "first": "f", "pages": 2}"#.utf8),
            kind: "listing checkpoint"
        ).get()
        #expect(ListingCheckpoint(members) == nil, "no step: not a checkpoint")
        listings.remove(task: checkpoint.task)
        #expect(listings.read(task: checkpoint.task) == nil)
    }
}
