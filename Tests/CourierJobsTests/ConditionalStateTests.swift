import Courier
import Foundation
import Testing

@testable import CourierJobs

/// The `conditional` state file: whatever the order in which flushes overlap, the file ends
/// with every validator recorded before the last flush.
@Suite("ConditionalState")
struct ConditionalStateTests {
    @Test("overlapping flushes never leave an older snapshot in the file")
    func overlappingFlushes() async throws {
        // Each trial ends with flushes that overlap, as the run's once-a-second flusher and
        // its final flush can: a writer that took its snapshot first must not rename it last.
        for trial in 0..<60 {
            try await Self.trial(trial, writers: 4, rounds: 8)
        }
    }

    /// The shards of a job share its output folder and so its state file: each one's flush
    /// must keep the others' entries (each wrote its own snapshot whole, and the last shard to
    /// flush dropped the rest: those outputs were fetched whole again the next night).
    @Test("states that share a file (shards) keep each other's entries")
    func sharedFile() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "conditional-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = URL(string: "http://127.0.0.1:1/x")!
        let shards = (0..<4).map { _ in
            ConditionalState(outputDir: folder.path) { Issue.record("warned: \($0)") }
        }
        for round in 0..<3 {
            for (index, shard) in shards.enumerated() {
                let response = HTTPResponse(
                    status: 200, headers: ["ETag": "\"\(index)-\(round)\""], url: url)
                shard.record(response, for: "s\(index)/\(round).json")
                try shard.flush()
            }
        }
        // A later 200 without validators forgets its entry, and only that one.
        shards[0].record(HTTPResponse(status: 200, headers: [:], url: url), for: "s0/0.json")
        try shards[0].flush()
        let reloaded = ConditionalState(outputDir: folder.path) { Issue.record("warned: \($0)") }
        for index in 0..<4 {
            for round in 0..<3 {
                let etag = reloaded.validators(for: "s\(index)/\(round).json")?.etag
                #expect(
                    etag == (index == 0 && round == 0 ? nil : "\"\(index)-\(round)\""),
                    "s\(index)/\(round)")
            }
        }
    }

    /// A hand-edited stamp (`"size": "abc"`) was read as an older state's entry, trusted by
    /// the file's presence alone: a changed file was kept behind 304s (trial M). Such an entry
    /// is fetched whole, stays so when the state is written back, and a new record mends it.
    @Test(
        "an entry whose stamp does not read is fetched whole until it is recorded again",
        arguments: [
            #""size":"abc","modified":"1.000000000""#, #""size":16"#,
            #""size":16,"modified":"1.000000000","pages":"two""#,
            #""size":16,"modified":"1.000000000","pages":2,"laterPages":[{"size":"x"}]"#,
        ])
    func unreadableStamp(stamp: String) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "conditional-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent(".courier"), withIntermediateDirectories: true)
        try Data("{\"a\":1}\n".utf8).write(to: folder.appendingPathComponent("e.json"))
        let document =
            #"{"version":1,"entries":{"e.json":{"etag":"\"1\"","#
            + stamp + #"},"other.json":{"etag":"\"2\""}}}"#
        try Data(document.utf8).write(to: folder.appendingPathComponent(".courier/state"))
        let state = ConditionalState(outputDir: folder.path) { Issue.record("warned: \($0)") }
        #expect(state.conditions(for: "e.json") == nil, "fetched whole")
        #expect(state.validators(for: "e.json")?.etag == "\"1\"", "the entry is kept")
        // Written back (another entry changed), it is still not trusted.
        try Data("{}".utf8).write(to: folder.appendingPathComponent("other.json"))
        state.record(
            HTTPResponse(
                status: 200, headers: ["ETag": "\"3\""], url: URL(string: "http://127.0.0.1:1/")!),
            for: "other.json")
        try state.flush()
        let reloaded = ConditionalState(outputDir: folder.path) { Issue.record("warned: \($0)") }
        #expect(reloaded.conditions(for: "e.json") == nil, "still fetched whole")
        #expect(reloaded.conditions(for: "other.json")?.etag == "\"3\"")
        // Fetched again, its new record is trusted.
        reloaded.record(
            HTTPResponse(
                status: 200, headers: ["ETag": "\"4\""], url: URL(string: "http://127.0.0.1:1/")!),
            for: "e.json")
        #expect(reloaded.conditions(for: "e.json")?.etag == "\"4\"")
    }

    /// An older state's entry for a listing has no page count: a deleted page 2 was not seen,
    /// and page 1's 304s kept the listing without it (trial M). Such an entry, and one recorded
    /// before the task paginated, is fetched whole once; recorded with its pages, it is trusted.
    @Test("a listing's entry without a page count is fetched whole until it is recorded again")
    func listingWithoutPageCount() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "conditional-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent(".courier"), withIntermediateDirectories: true)
        try Data("[1]\n".utf8).write(to: folder.appendingPathComponent("p1.json"))
        let validators = HTTPValidators(["ETag": "\"1\""])
        let page: (Int) -> String? = { "p\($0).json" }
        let state = ConditionalState(outputDir: folder.path) { Issue.record("warned: \($0)") }
        state.recordListing(validators, pages: 1, for: "p1.json", page: page)
        #expect(state.conditions(for: "p1.json", page: page)?.etag == "\"1\"")
        try state.flush()
        // The same entry as an older state wrote it: no page count.
        let document = try String(
            contentsOf: folder.appendingPathComponent(".courier/state"), encoding: .utf8)
        #expect(document.contains(#""pages":1"#), "\(document)")
        try Data(document.replacingOccurrences(of: #","pages":1"#, with: "").utf8).write(
            to: folder.appendingPathComponent(".courier/state"))
        let older = ConditionalState(outputDir: folder.path) { Issue.record("warned: \($0)") }
        #expect(older.conditions(for: "p1.json", page: page) == nil, "the listing is fetched whole")
        #expect(older.conditions(for: "p1.json")?.etag == "\"1\"", "a lone file's is asked")
        older.recordListing(validators, pages: 1, for: "p1.json", page: page)
        #expect(older.conditions(for: "p1.json", page: page)?.etag == "\"1\"")
    }

    /// The run's once-a-second flush ignores its errors; one that failed must leave the
    /// changes to write, so that the final flush meets the error again and the run says it
    /// (a planted `.courier` link was refused in silence when a flush came first).
    @Test("a failed flush leaves its changes to write: the next flush fails the same way")
    func failedFlushStaysDirty() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "conditional-\(UUID().uuidString)")
        let outside = folder.appendingPathComponent("outside")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        let output = folder.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            at: output.appendingPathComponent(".courier"), withDestinationURL: outside)
        let state = ConditionalState(outputDir: output.path) { Issue.record("warned: \($0)") }
        let url = URL(string: "http://127.0.0.1:1/x")!
        state.record(HTTPResponse(status: 200, headers: ["ETag": "\"1\""], url: url), for: "a")
        #expect(throws: FileError.self) { try state.flush() }
        #expect(throws: FileError.self, "the second flush still has the entry to write") {
            try state.flush()
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)
    }

    /// A run killed after saving but before its once-a-second flush left the saved outputs'
    /// validators nowhere, and `--resume` skips those tasks as done: the next night fetched
    /// them whole. The journal keeps each entry from the moment it is recorded.
    @Test("entries recorded and never flushed (a kill -9) reach the next run through the journal")
    func journalSurvivesAKill() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "conditional-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = URL(string: "http://127.0.0.1:1/x")!
        let courier = folder.appendingPathComponent(".courier")
        do {
            let killed = ConditionalState(outputDir: folder.path, owner: "shard-1-of-2", run: "a") {
                Issue.record("warned: \($0)")
            }
            killed.record(
                HTTPResponse(status: 200, headers: ["ETag": "\"k1\""], url: url), for: "k1.json")
            killed.record(
                HTTPResponse(status: 200, headers: ["ETag": "\"k2\""], url: url), for: "k2.json")
            killed.record(HTTPResponse(status: 200, headers: [:], url: url), for: "k2.json")
            // Dropped without a flush, as a killed run never flushes.
        }
        let journals = try FileManager.default.contentsOfDirectory(atPath: courier.path)
        #expect(journals == ["journal.shard-1-of-2.a.0"])
        // A sibling shard reads it but leaves it (its writer may be alive); the whole job's
        // next run reads it, writes the state, and removes it.
        let sibling = ConditionalState(outputDir: folder.path, owner: "shard-0-of-2", run: "b") {
            Issue.record("warned: \($0)")
        }
        #expect(sibling.validators(for: "k1.json")?.etag == "\"k1\"")
        try sibling.flush()
        #expect(
            FileManager.default.fileExists(atPath: courier.appendingPathComponent(journals[0]).path)
        )
        let next = ConditionalState(outputDir: folder.path, run: "c") {
            Issue.record("warned: \($0)")
        }
        #expect(next.validators(for: "k1.json")?.etag == "\"k1\"")
        #expect(next.validators(for: "k2.json") == nil, "the later forget wins")
        try next.flush()
        let left = try FileManager.default.contentsOfDirectory(atPath: courier.path).filter {
            $0.hasPrefix("journal.")
        }
        #expect(left.isEmpty, "\(left)")
        let reloaded = ConditionalState(outputDir: folder.path) { Issue.record("warned: \($0)") }
        #expect(reloaded.validators(for: "k1.json")?.etag == "\"k1\"")
    }

    /// A deleted output fetched again with the validators the state already holds records
    /// nothing new; it wrote a journal line that no flush followed, and the run left the
    /// journal behind (trial J).
    @Test("validators recorded again unchanged leave no journal behind")
    func unchangedLeavesNoJournal() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "conditional-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = URL(string: "http://127.0.0.1:1/x")!
        let response = HTTPResponse(status: 200, headers: ["ETag": "\"v1\""], url: url)
        let first = ConditionalState(outputDir: folder.path, run: "a") {
            Issue.record("warned: \($0)")
        }
        first.record(response, for: "a.json")
        try first.flush()
        let second = ConditionalState(outputDir: folder.path, run: "b") {
            Issue.record("warned: \($0)")
        }
        second.record(response, for: "a.json")
        try second.flush()
        let courier = folder.appendingPathComponent(".courier")
        let left = try FileManager.default.contentsOfDirectory(atPath: courier.path).filter {
            $0.hasPrefix("journal.")
        }
        #expect(left.isEmpty, "\(left)")
        #expect(second.validators(for: "a.json")?.etag == "\"v1\"")
    }

    static func trial(_ trial: Int, writers: Int, rounds: Int) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "conditional-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let state = ConditionalState(outputDir: folder.path) { Issue.record("warned: \($0)") }
        let url = URL(string: "http://127.0.0.1:1/x")!
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    for round in 0..<rounds {
                        let response = HTTPResponse(
                            status: 200, headers: ["ETag": "\"\(writer)-\(round)\""], url: url)
                        state.record(response, for: "w\(writer)/\(round).json")
                        try? state.flush()
                    }
                }
            }
        }
        try state.flush()
        let reloaded = ConditionalState(outputDir: folder.path) { Issue.record("warned: \($0)") }
        var missing: [String] = []
        for writer in 0..<writers {
            for round in 0..<rounds
            where reloaded.validators(for: "w\(writer)/\(round).json")?.etag
                != "\"\(writer)-\(round)\""
            {
                missing.append("w\(writer)/\(round).json")
            }
        }
        #expect(missing.isEmpty, "trial \(trial): the file lacks \(missing)")
        // Every entry is in the file, so the last flush removed every journal: one left
        // means a flush cleared the mark of work to do without the entry it marked.
        let left = try FileManager.default.contentsOfDirectory(
            atPath: folder.appendingPathComponent(".courier").path
        ).filter { $0.hasPrefix("journal.") }
        #expect(left.isEmpty, "trial \(trial): journals left \(left)")
    }
}
