@testable import CourierJobs
import Foundation
import Testing

/// The job's `checks` judged on a run's figures, without a run.
@Suite("Data check verdict")
struct DataCheckVerdictTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func specs(_ minima: [Int?]) throws -> [TaskSpec] {
        let job = try ExpansionTests.load(
            ExpansionTests.job(tasks: #"{"id": "t", "path": "/items"}"#))
        let base = try #require(job.tasks.first)
        return minima.enumerated().map { index, least in
            var spec = base
            spec.id = "t\(index)"
            spec.path = "tasks[\(index)]"
            spec.checks.minRecords = least
            return spec
        }
    }

    @Test func recordsAreCountedForTheRunAndForEachEntryThatRan() throws {
        let specs = try Self.specs([2, nil, 5])
        var figures = DataCheckVerdict.Figures()
        figures.records = [0: 1, 1: 10]
        let verdict = DataCheckVerdict(
            job: DataChecks(minRecords: 12), specs: specs, figures: figures, now: Self.now)
        #expect(
            verdict.failures == [
                .init(
                    check: "checks.minRecords", message: "the run kept 11 records, fewer than 12"),
                .init(
                    check: "tasks[0].checks.minRecords",
                    message: "task t0 kept 1 record, fewer than 2"),
            ], "tasks[2] ran no task here: not judged")
        figures.records = [0: 2, 1: 10, 2: 5]
        #expect(
            DataCheckVerdict(
                job: DataChecks(minRecords: 12), specs: specs, figures: figures, now: Self.now
            ).failures.isEmpty)
    }

    @Test func theErrorRateIsOverRequestsRetriedOrFailed() throws {
        var figures = DataCheckVerdict.Figures()
        (figures.requests, figures.unsuccessful) = (200, 11)
        let checks = DataChecks(maxErrorRate: 0.05)
        let failed = DataCheckVerdict(job: checks, specs: [], figures: figures, now: Self.now)
        #expect(
            failed.failures.first?.message
                == "11 of 200 requests failed or were retried (5.5 %), more than 5 %")
        figures.unsuccessful = 10
        #expect(
            DataCheckVerdict(job: checks, specs: [], figures: figures, now: Self.now).failures
                .isEmpty, "at the bound passes")
    }

    @Test func theNewestCursorMustBeFreshWhateverItsForm() throws {
        let checks = DataChecks(maxCursorAge: 36 * 3600)
        func failures(_ cursors: [String: String]) -> [String] {
            var figures = DataCheckVerdict.Figures()
            figures.cursors = cursors
            return DataCheckVerdict(job: checks, specs: [], figures: figures, now: Self.now)
                .failures.map(\.message)
        }
        let hourAgo = Self.now.addingTimeInterval(-3600)
        let fresh = ISO8601DateFormatter().string(from: hourAgo)
        #expect(failures(["a": "2020-01-01T00:00:00Z", "b": fresh]).isEmpty, "the newest counts")
        #expect(failures(["a": String(Int(hourAgo.timeIntervalSince1970))]).isEmpty, "seconds")
        #expect(
            failures(["a": String(Int(hourAgo.timeIntervalSince1970 * 1000))]).isEmpty,
            "milliseconds")
        #expect(
            failures(["a": "2027-01-14"]).isEmpty, "a date, UTC: 2027-01-15T08:00Z is 32 h on")
        let stale = failures(["a": "2027-01-10T00:00:00Z", "b": "not a time"])
        #expect(
            stale == [
                "the newest cursor, 2027-01-10T00:00:00Z (task a), is 5d8h old, more than 1d12h"
            ])
        #expect(failures([:]) == ["no since task has kept a cursor yet"])
        #expect(failures(["a": "abc"]).first?.hasPrefix("no cursor is a time") == true)
        #expect(
            failures(["a": "50"]).first?.hasPrefix("no cursor is a time") == true,
            "an id is not seconds since 1970")
    }
}
