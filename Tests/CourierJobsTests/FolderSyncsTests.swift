import Courier
@testable import CourierJobs
import Foundation
import Testing

/// Group commit of folder syncs: every caller returns after a sync that started after its
/// call, and callers that come while a sync runs share the next one.
@Suite("Folder syncs")
struct FolderSyncsTests {
    /// Each sync's start and end, and each caller's call and return, on one clock.
    final class Timeline: @unchecked Sendable {
        private let lock = NSLock()
        private(set) var syncs: [(start: UInt64, end: UInt64)] = []
        private(set) var calls: [(call: UInt64, returned: UInt64)] = []

        func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
        func sync(_ start: UInt64, _ end: UInt64) { lock.withLock { syncs.append((start, end)) } }
        func call(_ call: UInt64, _ returned: UInt64) {
            lock.withLock { calls.append((call, returned)) }
        }
    }

    @Test("200 callers at once: every one covered by a sync started after it, two syncs in all")
    func groupCommit() async throws {
        let timeline = Timeline()
        // The first sync lasts until all 200 callers wait (a disk's slow fsync, with no time
        // in it: a loaded machine only makes it longer): the 199 that came while it ran share
        // the second. A hang guard of 300 s, should a caller never come.
        let box = Locked<FolderSyncs?>(nil)
        let syncs = FolderSyncs { folder in
            let start = timeline.now()
            if timeline.syncs.isEmpty, let syncs = box.withLock({ $0 }) {
                let deadline = Date().addingTimeInterval(300)
                while syncs.waiting(in: folder) < 200, Date() < deadline {
                    Thread.sleep(forTimeInterval: 0.001)
                }
            }
            timeline.sync(start, timeline.now())
        }
        box.withLock { $0 = syncs }
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<200 {
                group.addTask {
                    let call = timeline.now()
                    await syncs.sync("/folder")
                    timeline.call(call, timeline.now())
                }
            }
        }
        #expect(timeline.calls.count == 200)
        for (call, returned) in timeline.calls {
            #expect(
                timeline.syncs.contains { $0.start >= call && $0.end <= returned },
                "a caller returned without a sync that started after its call")
        }
        #expect(timeline.syncs.count == 2, "\(timeline.syncs.count) syncs for 200 callers")
    }

    @Test("folders are synced apart; a later call after all returned starts a new sync")
    func separateFolders() async throws {
        let seen = Locked<[String]>([])
        let syncs = FolderSyncs { folder in seen.withLock { $0.append(folder) } }
        await syncs.sync("/a")
        await syncs.sync("/b")
        await syncs.sync("/a")
        #expect(seen.withLock { $0 } == ["/a", "/b", "/a"])
    }
}
