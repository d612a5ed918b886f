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

    @Test func fingerprintsThatMeetAreToldApartByTheIdsThemselves() throws {
        // Every id given the same fingerprint: unique ids still pass, and a real duplicate is
        // still reported once, at the task that repeats it, with the id as written.
        let unique = try job(
            #"{"id": "x{n}", "path": "/x", "foreach": {"n": {"range": [1, 50]}}}, {"id": "y", "path": "/y"}"#
        )
        #expect(try JobValidator.validate(unique, limit: 1000, fingerprint: { _ in 7 }) == 51)
        let repeated = try job(
            #"{"id": "x{n}", "path": "/x", "foreach": {"n": {"range": [1, 50]}}}, {"id": "x25", "path": "/y"}"#
        )
        let errors = try #require(throws: JobFileErrors.self) {
            try JobValidator.validate(repeated, limit: 1000, fingerprint: { _ in 7 })
        }
        #expect(errors.errors.map(\.path) == ["tasks[1].id"])
        #expect(errors.description.contains(#"duplicate task id "x25""#))
        // Many duplicates stop at twenty errors, as before.
        let many = try job(
            #"{"id": "x{n}", "path": "/x", "foreach": {"n": {"range": [1, 50]}}}, {"id": "x{n}", "path": "/y", "foreach": {"n": {"range": [1, 50]}}}"#
        )
        let stopped = try #require(throws: JobFileErrors.self) { try JobValidator.validate(many) }
        #expect(stopped.errors.count == 21)
        #expect(stopped.errors.last?.message == "stopping after 20 errors")
        #expect(JobValidator.fingerprint("x1") != JobValidator.fingerprint("x2"))
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
            // Zipped: an id without a variable, and ranges of different lengths.
            #"{"id": "t", "path": "/x", "zip": true, "foreach": {"a": {"range": [1, 2000]}, "b": {"range": [1, 2000]}}}"#,
            #"{"id": "t{a}", "path": "/x", "zip": true, "foreach": {"a": {"range": [1, 2000]}, "b": {"range": [1, 2001]}}}"#,
        ] {
            let job = try job(tasks)
            #expect(StaticValidation.provableCount(of: job.tasks[0], in: job) == nil, "\(tasks)")
        }
    }

    @Test func zippedRangesValidateAtOnce() throws {
        // Ten billion pairs: the id uses one of the two, which moves with every pair.
        let job = try job(
            #"{"id": "t{a}", "path": "/x/{a}/{b}", "zip": true, "foreach": {"a": {"range": [1, 10000000000]}, "b": {"range": [5, 10000000004]}}}"#
        )
        #expect(try JobValidator.validate(job) == 10_000_000_000)
    }

    @Test func zippedRangesOfDifferentLengthsAreOneErrorAtOnce() throws {
        let job = try job(
            #"{"id": "t{a}", "path": "/x/{b}", "zip": true, "foreach": {"a": {"range": [1, 10000000000]}, "b": ["x", "y"]}}"#
        )
        let errors = try #require(throws: JobFileErrors.self) { try JobValidator.validate(job) }
        #expect(errors.errors.map(\.path) == ["tasks[0].foreach"])
        #expect(errors.errors[0].message.contains("a has 10000000000 and b has 2"))
    }

    @Test func aJobTooBigToCheckOneByOneIsRefusedAtOnce() throws {
        // 8.1 * 10^11 fixed-width ids: unique, but only expansion could tell.
        let job = try job(
            #"{"id": "t{a}{b}", "path": "/x/{a}/{b}", "foreach": {"a": {"range": [100000, 999999]}, "b": {"range": [100000, 999999]}}}"#
        )
        let errors = try #require(throws: JobFileErrors.self) { try JobValidator.validate(job) }
        #expect(errors.errors.map(\.path) == ["tasks[0].id"])
        #expect(errors.errors[0].message.contains("expands to more than 10000000 tasks"))
        #expect(errors.errors[0].message.contains("split the job"))
    }

    @Test func theLimitCountsEveryExpandedTask() throws {
        // Two specs of six million each that cannot be told apart by their ids' prefixes.
        let job = try job(
            #"{"id": "t{a}", "path": "/x", "foreach": {"a": {"range": [1, 6000000]}}}, {"id": "t{a}", "path": "/y", "foreach": {"a": {"range": [7000000, 12999999]}}}"#
        )
        #expect(JobValidator.oneByOneCount(job, skipping: []).0 == JobValidator.oneByOneLimit + 1)
        let errors = try #require(throws: JobFileErrors.self) { try JobValidator.validate(job) }
        #expect(errors.errors[0].message.contains("expands to 6000000 tasks"))
    }

    @Test func aTaskOverOneLinesFileIsCheckedHoweverBig() throws {
        // The limit stops products that explode, not data: twelve lines pass a limit of five,
        // alone or zipped; the same twelve as a product of a range and a file do not.
        let name = "ids-\(UUID().uuidString).txt"
        let lines = FileManager.default.temporaryDirectory.appendingPathComponent(name)
        try (1...12).map { "id\($0)" }.joined(separator: "\n").write(
            to: lines, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: lines) }
        let alone = try job(
            #"{"id": "t{v}", "path": "/x/{v}", "foreach": {"v": {"lines": "\#(name)"}}}"#)
        #expect(try JobValidator.validate(alone, limit: 5) == 12)
        let zipped = try job(
            #"{"id": "t{v}", "path": "/x/{w}", "zip": true, "foreach": {"v": {"lines": "\#(name)"}, "w": {"lines": "\#(name)"}}}"#
        )
        #expect(try JobValidator.validate(zipped, limit: 5) == 12)
        let product = try job(
            #"{"id": "t{n}-{v}", "path": "/x", "foreach": {"n": {"range": [1, 4]}, "v": {"lines": "\#(name)"}}}"#
        )
        #expect(StaticValidation.followsOneFile(product.tasks[0]) == false)
        let errors = try #require(throws: JobFileErrors.self) {
            try JobValidator.validate(product, limit: 5)
        }
        #expect(errors.errors[0].message.contains("expands to more than 5 tasks"), "\(errors)")
        #expect(try JobValidator.validate(product, limit: 48) == 48)
    }

    @Test func sizesAreCountedWithoutExpanding() throws {
        let job = try job(
            #"{"id": "t{a}-{b}-{c}", "path": "/x", "foreach": {"a": {"range": [-5, 4]}, "b": ["p", "q", "r"], "c": {"range": [9223372036854775806, 9223372036854775807]}}}"#
        )
        #expect(StaticValidation.expansionCount(of: job.tasks[0], cap: .max) == 60)
        #expect(StaticValidation.expansionCount(of: job.tasks[0], cap: 7) == 7)
        #expect(try JobValidator.validate(job) == 60)
    }

    @Test func cornersAreStillChecked() throws {
        let job = try job(
            #"{"id": "t{n}", "url": "x{n}", "foreach": {"n": {"range": [1, 2000000]}}}"#)
        #expect(throws: JobFileErrors.self) { try JobValidator.validate(job) }
    }
}
