import Courier
@testable import CourierJobs
import Foundation
import Testing

/// Which leftovers a run removes at once: its own (the whole job's run: its shards' too), by
/// the tag in their names; any other only once it is an hour old.
@Suite("Stale temporaries by tag")
struct StaleTemporariesTests {
    @Test("a shard removes its own shard's leftovers at once; a whole run, every shard's")
    func shardTags() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-stale-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = URL(fileURLWithPath: "/srv/out")
        let job = StaleTemporaries.tag(outputDir: output, job: "nightly")
        let shard1 = StaleTemporaries.tag(outputDir: output, job: "nightly", shard: (1, 3))
        let shard2 = StaleTemporaries.tag(outputDir: output, job: "nightly", shard: (2, 3))
        #expect(shard1 == job + "s1of3")
        let other = StaleTemporaries.tag(outputDir: output, job: "weekly")
        let names = [job, shard1, shard2, other, job + "sXof3"].map { ".a.json.\($0).DEADBEEF.tmp" }
        func plant() throws {
            for name in names { try Data("x".utf8).write(to: folder.appendingPathComponent(name)) }
        }
        func left() throws -> Set<String> {
            Set(try FileManager.default.contentsOfDirectory(atPath: folder.path))
        }
        try plant()
        StaleTemporaries(tag: shard1) { _, _ in }.sweep(folder)
        #expect(try left() == Set(names).subtracting([names[1]]), "the shard's own only")
        try plant()
        StaleTemporaries(tag: job) { _, _ in }.sweep(folder)
        #expect(try left() == [names[3], names[4]], "the job's and its shards'; not another's")
    }

    @Test("a folder's leftovers are told in one line, not one each")
    func oneLinePerFolder() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-stale-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let tag = StaleTemporaries.tag(outputDir: folder, job: "nightly")
        let names = (1...5).map { ".item-\($0).json.\(tag).DEADBEEF.tmp" }
        for name in names { try Data("x".utf8).write(to: folder.appendingPathComponent(name)) }
        let told = Locked<[(String, [String])]>([])
        let sweeper = StaleTemporaries(tag: tag) { folder, names in
            told.withLock { $0.append((folder, names)) }
        }
        sweeper.sweep(folder)
        sweeper.sweep(folder)
        let calls = told.withLock { $0 }
        #expect(calls.count == 1)
        #expect(calls.first?.1 == names.sorted())
        let line = StaleTemporaries.removal(in: "out/items", names: names.sorted())
        #expect(
            line
                == "courier: removed 5 temporary files in out/items, left by an interrupted run (\(names[0]), \(names[1]), \(names[2]), …)"
        )
        #expect(
            StaleTemporaries.removal(in: "out", names: [".a.json.DEADBEEF.tmp"])
                == "courier: removed out/.a.json.DEADBEEF.tmp, left by an interrupted run")
        // A folder per item: the first few folders get their line, then one says more follow.
        let lines = (1...60).compactMap {
            StaleTemporaries.removal(in: "out/\($0)", names: [".a.tmp", ".b.tmp"], nth: $0)
        }
        #expect(lines.count == StaleTemporaries.foldersNamed + 1)
        #expect(lines.last?.contains("in other folders (not listed)") == true)
    }

    /// Trial MMM: saves into one folder by two spellings (`lk/a.json` with `lk -> .`, and
    /// `b.json`): the second spelling's first save swept the folder again and removed a
    /// temporary the run was writing there.
    @Test("a folder reached by another spelling is not swept again")
    func anotherSpellingOfASweptFolder() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-stale-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let link = folder.appendingPathComponent("lk")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: ".")
        let tag = StaleTemporaries.tag(outputDir: folder, job: "nightly")
        let temporaries = StaleTemporaries(tag: tag) { _, _ in }
        let leftover = ".a.json.\(tag).DEADBEEF.tmp"
        try Data("x".utf8).write(to: folder.appendingPathComponent(leftover))
        temporaries.sweep(atPath: folder.path)
        #expect(
            !FileManager.default.fileExists(atPath: folder.appendingPathComponent(leftover).path))
        // This run's own temporary, being written, then a save by the other spelling.
        let writing = ".b.json.\(tag).CAFEF00D.tmp"
        try Data("y".utf8).write(to: folder.appendingPathComponent(writing))
        temporaries.sweep(atPath: link.path)
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent(writing).path))
    }
}
