import Courier
import CourierTestSupport
import Foundation
import Testing

@testable import CourierJobs

/// Debug builds record any blocking file step taken on a curl loop thread
/// (``LoopThreadFileWork``); `SavesOffLoopRunTests` (CLITests) reads the record of a real run.
/// A run is never made in this process: its signal handling would reach every other test.
@Suite("SavesOffLoop")
struct SavesOffLoopTests {
    /// The check `SavesOffLoopRunTests` relies on can fail: a save on a thread named as the
    /// loops are is recorded.
    @Test("a save on a thread named as the curl loops are is recorded")
    func recordsLoopThreadSaves() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-saves-witness-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("x.json")
        let done = Locked<Result<Void, FileError>?>(nil)
        let thread = Thread {
            // Named from inside, as the loops name themselves (a name set before `start` is
            // not applied by swift-corelibs-foundation), and again until it reads back: the
            // setter does nothing until `start` in the parent has stored the thread's handle,
            // which on a loaded machine came after this line one run in four.
            for _ in 0..<1000 where !LoopThreadFileWork.isCurlLoopThread {
                Thread.current.name = curlLoopThreadName
                if !LoopThreadFileWork.isCurlLoopThread { usleep(1000) }
            }
            let result = Result { () throws(FileError) in
                try OutputFile.write(Data("{}".utf8), to: target)
            }
            done.withLock { $0 = result }
        }
        thread.start()
        for _ in 0..<500 where done.withLock({ $0 }) == nil {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(done.withLock { $0 } != nil, "the write ended within 5 s")
        try done.withLock { $0 }?.get()
        let seen = LoopThreadFileWork.seen.withLock { $0 }.filter {
            $0.contains(folder.lastPathComponent)
        }
        #expect(seen.contains { $0.hasPrefix("create ") })
        #expect(seen.contains { $0.hasPrefix("write ") })
        #expect(seen.contains { $0.hasPrefix("commit ") })
    }
}
