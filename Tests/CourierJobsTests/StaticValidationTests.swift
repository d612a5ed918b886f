import Foundation
import Testing

@testable import CourierJobs

/// Which specs validate without expansion, and that the rest still expand.
@Suite("StaticValidation")
struct StaticValidationTests {
    func job(_ tasks: String) throws -> Job {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "static-\(UUID().uuidString).json")
        try #"{"version": 1, "name": "s", "baseURL": "http://127.0.0.1:1", "tasks": [\#(tasks)]}"#
            .write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        return try JobDecoder.load(file)
    }

    @Test func aBillionRangeValidatesAtOnce() throws {
        let job = try job(
            #"{"id": "t{n}", "path": "/x/{n}", "foreach": {"n": {"range": [1, 1000000000]}}, "save": "d/{n}.json"}"#
        )
        #expect(try JobValidator.validate(job) == 1_000_000_000)
    }

    @Test func productOfSeparatedRanges() throws {
        let job = try job(
            #"{"id": "p{a}_{b}", "path": "/x", "foreach": {"a": {"range": [1, 2000]}, "b": {"range": [-1000, 999]}}}"#
        )
        #expect(StaticValidation.provableCount(of: job.tasks[0], in: job) == 4_000_000)
    }

    @Test func unprovableSpecsAreExpanded() throws {
        // Adjacent variables can collide ("t1" + "11" == "t11" + "1"), an id that leaves a
        // variable out repeats, and a list is not a range.
        for tasks in [
            #"{"id": "t{a}{b}", "path": "/x", "foreach": {"a": {"range": [1, 2000]}, "b": {"range": [1, 2000]}}}"#,
            #"{"id": "t{a}-{b}", "path": "/x", "foreach": {"a": {"range": [1, 2000]}, "b": {"range": [1, 2000]}}}"#,
            #"{"id": "t{a}", "path": "/x", "foreach": {"a": {"range": [1, 2000]}, "b": {"range": [1, 2000]}}}"#,
            #"{"id": "t{a}", "path": "/x", "foreach": {"a": {"range": [1, 100]}}}"#,
            #"{"id": "t{a}", "url": "http://127.0.0.1:1/{a}", "foreach": {"a": {"range": [1, 100000]}}}"#,
            #"{"id": "t{a}", "path": "/x", "foreach": {"a": {"range": [1, 2000000]}}}, {"id": "t-{b}", "path": "/y", "foreach": {"b": [1]}}"#,
        ] {
            let job = try job(tasks)
            #expect(StaticValidation.provableCount(of: job.tasks[0], in: job) == nil, "\(tasks)")
        }
    }

    @Test func cornersAreStillChecked() throws {
        let job = try job(
            #"{"id": "t{n}", "url": "x{n}", "foreach": {"n": {"range": [1, 2000000]}}}"#)
        #expect(throws: JobFileErrors.self) { try JobValidator.validate(job) }
    }
}
