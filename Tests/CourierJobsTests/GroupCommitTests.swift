import Courier
@testable import CourierJobs
import Foundation
import Testing

/// Saves committed in batches, on real files: the syncs each batch makes are counted (the
/// system's own calls, made through counters), and every target is whole or as it was.
@Suite("Group commit of saves")
struct GroupCommitTests {
    /// The syncs a ``GroupCommit`` made, by kind.
    final class Counts: Sendable {
        let bytes = Locked(0)
        let fileSystems = Locked(0)
        let folders = Locked(0)
        /// Holds the first batch (a slow disk, with no time in it) until the test lets it go.
        let gate = DispatchSemaphore(value: 0)
    }

    /// Real syncs, counted; the first sync of bytes (a lone first save) holds its batch until
    /// the test opens ``Counts/gate`` (``release(_:when:waiting:)``). A hang guard of 300 s.
    static func syncs(_ counts: Counts, failFileSystem: Bool = false) -> GroupCommit.Syncs {
        GroupCommit.Syncs(
            bytes: { replacement throws(FileError) in
                let first = counts.bytes.withLock { count -> Bool in
                    count += 1
                    return count == 1
                }
                if first { _ = counts.gate.wait(timeout: .now() + 300) }
                try replacement.syncBytes()
            },
            fileSystem: { replacement throws(FileError) in
                counts.fileSystems.withLock { $0 += 1 }
                if failFileSystem {
                    throw FileError(path: "test", action: "sync the file system of", code: EIO)
                }
                try replacement.syncFileSystem()
            },
            folder: { replacement in
                counts.folders.withLock { $0 += 1 }
                replacement.syncFolder()
            })
    }

    /// Returns once the first batch is being synced (its one save alone in it), so that the
    /// saves started next form the second. A hang guard of 300 s.
    static func firstBatchHeld(_ counts: Counts) async {
        let deadline = Date().addingTimeInterval(300)
        while counts.bytes.withLock({ $0 }) == 0, Date() < deadline { await Task.yield() }
    }

    /// Lets the held first batch go once `count` saves wait for the next. A hang guard of
    /// 300 s, should they never come.
    static func release(_ counts: Counts, when commit: GroupCommit, waiting count: Int) async {
        let deadline = Date().addingTimeInterval(300)
        while commit.waiting < count, Date() < deadline { await Task.yield() }
        counts.gate.signal()
    }

    static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-group-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// A replacement of `name` in `folder` with `text` written into its temporary.
    static func written(_ text: String, as name: String, in folder: URL) throws -> FileReplacement {
        let replacement = try FileReplacement(replacing: folder.appendingPathComponent(name))
        try replacement.write(Data(text.utf8))
        return replacement
    }

    @Test(
        "100 saves that come while one is committed share one file-system sync and one folder sync")
    func batches() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let counts = Counts()
        let commit = GroupCommit(syncs: Self.syncs(counts))
        let first = Task { try await commit.commit(try Self.written("first", as: "0", in: folder)) }
        await Self.firstBatchHeld(counts)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 1...100 {
                group.addTask {
                    try await commit.commit(
                        try Self.written("body \(index)", as: "\(index)", in: folder))
                }
            }
            await Self.release(counts, when: commit, waiting: 100)
            try await group.waitForAll()
        }
        try await first.value
        #expect(counts.bytes.withLock { $0 } == 1, "the lone first save syncs its own bytes")
        #expect(counts.fileSystems.withLock { $0 } == 1, "one sync for the batch of 100")
        #expect(counts.folders.withLock { $0 } == 2, "one folder sync per batch")
        for index in 1...100 {
            let text = try String(
                contentsOf: folder.appendingPathComponent("\(index)"), encoding: .utf8)
            #expect(text == "body \(index)")
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(names.count == 101, "no temporary left: \(names.filter { $0.hasPrefix(".") })")
    }

    @Test("a batch whose sync fails leaves every target as it was and no temporary")
    func failedSync() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        for index in 0..<3 {
            try Data("old \(index)".utf8).write(to: folder.appendingPathComponent("\(index)"))
        }
        let counts = Counts()
        let commit = GroupCommit(
            syncs: Self.syncs(counts, failFileSystem: true))
        let results = Locked<[Int: Bool]>([:])
        let save = { @Sendable (index: Int) async throws in
            let replacement = try Self.written("new \(index)", as: "\(index)", in: folder)
            let saved = (try? await commit.commit(replacement)) != nil
            results.withLock { $0[index] = saved }
        }
        let first = Task { try await save(0) }
        await Self.firstBatchHeld(counts)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 1..<3 { group.addTask { try await save(index) } }
            await Self.release(counts, when: commit, waiting: 2)
            try await group.waitForAll()
        }
        try await first.value
        // The first is a batch of its own (its own fsync, which succeeds); the two that came
        // while it was held share the failing sync.
        let saved = results.withLock { $0 }
        #expect(saved == [0: true, 1: false, 2: false])
        for (index, ok) in saved {
            let text = try String(
                contentsOf: folder.appendingPathComponent("\(index)"), encoding: .utf8)
            #expect(text == (ok ? "new \(index)" : "old \(index)"))
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(names.sorted() == ["0", "1", "2"])
    }

    @Test("a batch over two folders syncs each folder once")
    func twoFolders() async throws {
        let root = try Self.folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let (left, right) = (root.appendingPathComponent("a"), root.appendingPathComponent("b"))
        for folder in [left, right] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        let counts = Counts()
        let commit = GroupCommit(syncs: Self.syncs(counts))
        let first = Task { try await commit.commit(try Self.written("x", as: "first", in: left)) }
        await Self.firstBatchHeld(counts)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<10 {
                group.addTask {
                    try await commit.commit(
                        try Self.written(
                            "\(index)", as: "\(index)", in: index % 2 == 0 ? left : right))
                }
            }
            await Self.release(counts, when: commit, waiting: 10)
            try await group.waitForAll()
        }
        try await first.value
        #expect(counts.fileSystems.withLock { $0 } == 1)
        #expect(counts.folders.withLock { $0 } == 3, "the first batch's folder, then a and b")
        #expect(try FileManager.default.contentsOfDirectory(atPath: right.path).count == 5)
    }

    @Test(
        "in a batch, the bytes are synced before any rename, and the folder before any save returns"
    )
    func order() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let events = Locked<[String]>([])
        let counts = Counts()
        let counted = Self.syncs(counts)
        let commit = GroupCommit(
            syncs: GroupCommit.Syncs(
                bytes: counted.bytes,
                fileSystem: { replacement throws(FileError) in
                    // No save of the batch is in its place yet.
                    let placed = (1...20).filter {
                        FileManager.default.fileExists(
                            atPath: folder.appendingPathComponent("\($0)").path)
                    }
                    events.withLock { $0.append("bytes synced, \(placed.count) placed") }
                    try counted.fileSystem(replacement)
                },
                folder: { replacement in
                    let placed = (1...20).filter {
                        FileManager.default.fileExists(
                            atPath: folder.appendingPathComponent("\($0)").path)
                    }
                    events.withLock { $0.append("folder synced, \(placed.count) placed") }
                    counted.folder(replacement)
                }))
        let first = Task { try await commit.commit(try Self.written("x", as: "0", in: folder)) }
        await Self.firstBatchHeld(counts)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 1...20 {
                group.addTask {
                    try await commit.commit(
                        try Self.written("\(index)", as: "\(index)", in: folder))
                    events.withLock { $0.append("returned") }
                }
            }
            await Self.release(counts, when: commit, waiting: 20)
            try await group.waitForAll()
        }
        try await first.value
        let seen = events.withLock { $0 }
        #expect(
            Array(seen.prefix(3))
                == [
                    "folder synced, 0 placed", "bytes synced, 0 placed", "folder synced, 20 placed",
                ])
        #expect(seen.dropFirst(3).allSatisfy { $0 == "returned" } && seen.count == 23)
    }
}
