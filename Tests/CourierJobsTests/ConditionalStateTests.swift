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
        for trial in 0..<30 {
            try await Self.trial(trial, writers: 4, rounds: 4)
        }
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
    }
}
