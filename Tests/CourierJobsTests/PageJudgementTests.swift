import Courier
@testable import CourierJobs
import Foundation
import Testing

/// A page judged without a network: each case is a task from a job file, a response made here
/// and the verdict the page loop acts on.
@Suite("Page judgement")
struct PageJudgementTests {
    /// The first task of a job whose one task spec is `task` (JSON members).
    static func task(_ task: String) throws -> (ExpandedTask, Job) {
        let job = try ExpansionTests.load(
            ExpansionTests.job(tasks: #"{"id": "t", "path": "/items", \#(task)}"#))
        return (try #require(try ExpansionTests.expand(job).first), job)
    }

    static func attempt(
        _ status: Int, _ body: String = "", headers: HTTPHeaders = [:], stop: String? = nil
    ) -> RetryAttempt {
        let url = URL(string: "http://127.0.0.1:9/api/items")!
        return RetryAttempt(
            request: HTTPRequest(url: url), number: 1,
            outcome: .success(
                HTTPResponse(status: status, headers: headers, body: Data(body.utf8), url: url)),
            retryDelay: nil, duration: 0.01, started: Date(timeIntervalSince1970: 0),
            stopReason: stop)
    }

    static func judgement(_ members: String, page: Int? = nil) throws -> PageJudgement {
        let (task, job) = try Self.task(members)
        return PageJudgement(
            task: task, captures: task.spec(in: job)?.captures ?? [], records: task.records?.rule,
            page: page)
    }

    @Test("onResponse decides before the status and expect: ignore keeps nothing, fail fails")
    func responseRulesDecideFirst() throws {
        let members = #"""
            "save": "out/t.json", "capture": {"ids": {"json": "/ids"}},
            "expect": {"status": [200], "bodyContains": "ready"},
            "onResponse": [
              {"status": [404], "action": "ignore"},
              {"status": [200], "bodyContains": "wait", "action": "retry"},
              {"bodyContains": "quota", "action": "fail"}
            ]
            """#
        var judgement = try Self.judgement(members)
        let (task, job) = try Self.task(members)
        judgement.rules = task.responseRules(in: job)
        let ignored = judgement.verdict(on: Self.attempt(404, "gone"))
        #expect(ignored.failure == nil && ignored.isOK && ignored.action == .ignore)
        #expect(ignored.save == nil && ignored.captured.isEmpty && ignored.records == nil)
        let failed = judgement.verdict(on: Self.attempt(200, "over quota"))
        #expect(failed.failure?.kind == "responseAction")
        #expect(failed.failure?.message == #"status 200 matched tasks[0].onResponse[2] ("fail")"#)
        let waited = judgement.verdict(on: Self.attempt(200, "please wait"))
        #expect(waited.failure?.kind == "responseAction", "a retry rule still matching at the end")
        #expect(waited.failure?.message.contains("on the last of 1 attempt") == true)
        let usual = judgement.verdict(on: Self.attempt(200, #"{"ids": [1], "s": "ready"}"#))
        #expect(usual.failure == nil && usual.action == nil && usual.save == "out/t.json")
        let unexpected = judgement.verdict(on: Self.attempt(500, "boom"))
        #expect(unexpected.failure?.kind == "unexpectedStatus", "no rule matched")
    }

    @Test func aSavedPageWaitsForItsSaveWithThePageNumberInThePath() throws {
        let verdict = try Self.judgement(
            #""save": "out/p{page}.json", "paginate": {"next": {"linkHeader": "next"}}"#, page: 3
        )
        .verdict(on: Self.attempt(200, "{}"))
        #expect(verdict.failure == nil)
        #expect(verdict.save == "out/p3.json")
        #expect(!verdict.isOK, "ok only once saved")
    }

    @Test func aStatusNotExpectedFailsWithTheStatusesAndTheRetryLayersReason() throws {
        let verdict = try Self.judgement(#""expect": {"status": [200, 201]}"#)
            .verdict(on: Self.attempt(503, stop: "no retries left"))
        #expect(verdict.failure?.kind == "unexpectedStatus")
        #expect(verdict.failure?.message == "status 503, expected 200, 201; no retries left")
        #expect(verdict.save == nil && verdict.captured.isEmpty)
    }

    @Test func aTransportErrorIsItsKind() throws {
        var attempt = Self.attempt(200)
        attempt.outcome = .failure(HTTPError(.timeout, "timed out after 1 s"))
        let verdict = try Self.judgement(#""save": "a.json""#).verdict(on: attempt)
        #expect(verdict.failure?.kind == "timeout")
        #expect(verdict.save == nil)
    }

    @Test func theExpectationComesBeforeTheCapturesAndTheSave() throws {
        let verdict = try Self.judgement(
            #""save": "a.json", "expect": {"json": {"/state": "done"}}, "capture": {"ids": {"json": "/items/*/id"}}"#
        ).verdict(on: Self.attempt(200, #"{"state": "running", "items": [{"id": 1}]}"#))
        #expect(verdict.failure?.kind == "expectation")
        #expect(verdict.captured.isEmpty && verdict.save == nil)
    }

    @Test func capturesAreTakenInOrderUpToTheFirstThatFindsNone() throws {
        let judgement = try Self.judgement(
            #""capture": {"ids": {"json": "/items/*/id"}, "token": {"json": "/token"}}"#)
        let good = judgement.verdict(
            on: Self.attempt(200, #"{"items": [{"id": 1}, {"id": 2}], "token": "t"}"#))
        #expect(good.failure == nil && good.isOK)
        #expect(good.captured.map(\.rule.name) == ["ids", "token"])
        #expect(good.captured.first?.values == ["1", "2"])
        let notJSON = try Self.judgement(
            #""capture": {"etag": {"header": "ETag"}, "ids": {"json": "/items/*/id"}}"#
        ).verdict(on: Self.attempt(200, "<html>", headers: ["ETag": "\"v1\""]))
        #expect(notJSON.failure?.kind == "capture")
        #expect(notJSON.failure?.message.contains("the body is not JSON") == true)
        #expect(notJSON.captured.map(\.rule.name) == ["etag"])
    }

    @Test func recordsAreFoundOnceAndTheBodyIsParsedOnceForEverything() throws {
        let verdict = try Self.judgement(
            #""records": {"from": "/items/*", "to": "r.jsonl", "write": "append"}, "since": {"max": "/items/*/at", "start": "2020-01-01T00:00:00Z"}"#
        ).verdict(on: Self.attempt(200, #"{"items": [{"at": "2021-01-01T00:00:00Z"}]}"#))
        #expect(verdict.failure == nil)
        #expect(verdict.recordLines.map { !$0.isEmpty } == true)
        #expect(verdict.document != nil, "the cursor reads the same parse")
    }

    @Test func aBodyThatIsNotJSONHasNoRecords() throws {
        let verdict = try Self.judgement(
            #""records": {"from": "/items/*", "to": "r.jsonl", "write": "append"}"#
        )
        .verdict(on: Self.attempt(200, "<html>"))
        #expect(verdict.failure?.kind == "records")
        #expect(verdict.failure?.message.contains("the body is not JSON") == true)
    }

    @Test func aNotModifiedConditionalMergeTakesItsRecordsFromTheSavedCopy() throws {
        let verdict = try Self.judgement(
            #""save": "a.json", "conditional": true, "records": {"from": "/items/*", "to": "r.jsonl", "write": "merge", "key": "/id"}"#
        ).verdict(on: Self.attempt(304))
        #expect(verdict.notModified && verdict.isOK)
        #expect(verdict.recordsFromSave == "a.json")
        #expect(verdict.save == nil && verdict.records == nil)
    }

    @Test func theNextPageFollowsTheLinkAndALoopFails() throws {
        let judgement = try Self.judgement(#""paginate": {"next": {"linkHeader": "next"}}"#)
        let first = judgement.task.request
        var position = PageJudgement.Position(
            paginator: judgement.task.paginate.map { Paginator(rule: $0, first: first) },
            request: first)
        let linked = try #require(
            try Self.attempt(
                200, "[]", headers: ["Link": #"<http://127.0.0.1:9/api/items?p=2>; rel="next""#]
            ).outcome.get())
        let following = judgement.following(linked, document: nil, position: &position)
        #expect(following.next?.url.absoluteString == "http://127.0.0.1:9/api/items?p=2")
        position.request = try #require(following.next)
        let again = judgement.following(linked, document: nil, position: &position)
        #expect(again.failure?.contains("pagination loops") == true)
        #expect(again.next == nil)
    }

    @Test func aWherePointerNoRecordHasIsNoted() throws {
        for (pointer, noted) in [("/categry", true), ("/category", false)] {
            let judgement = try Self.judgement(
                #""records": {"from": "/items/*", "to": "r.jsonl", "write": "merge", "key": "/id", "where": {"\#(pointer)": "a"}}"#
            )
            var position = PageJudgement.Position(
                paginator: nil, request: judgement.task.request)
            let response = try #require(
                try Self.attempt(200, #"{"items": [{"id": 1, "category": "b"}]}"#).outcome.get())
            let document = try JSONParser.parse([UInt8](response.body))
            let following = judgement.following(
                response, document: document, position: &position)
            #expect(
                (following.whereNote?.contains("no record had a value at \(pointer)") == true)
                    == noted, "\(pointer): \(following.whereNote ?? "no note")")
        }
    }

    @Test func theSinceValueIsTheGreatestSeenAndAMissedPointerIsNoted() throws {
        let judgement = try Self.judgement(
            #""since": {"max": "/items/*/updatedAt", "start": "2020-01-01T00:00:00Z"}, "save": "s.json""#
        )
        var position = PageJudgement.Position(paginator: nil, request: judgement.task.request)
        let body = try JSONParser.parse(
            Array(
                #"{"items": [{"updatedAt": "2021-05-01T00:00:00Z"}, {"updatedAt": "2021-03-01T00:00:00Z"}]}"#
                    .utf8))
        let response = try Self.attempt(200).outcome.get()
        let found = judgement.following(response, document: body, position: &position)
        #expect(position.sinceValue == "2021-05-01T00:00:00Z")
        #expect(found.sinceNote == nil && found.next == nil)

        var misspelt = PageJudgement.Position(paginator: nil, request: judgement.task.request)
        let other = try JSONParser.parse(Array(#"{"items": [{"updated_at": "2021-05-01"}]}"#.utf8))
        let missed = judgement.following(response, document: other, position: &misspelt)
        #expect(misspelt.sinceValue == nil)
        #expect(missed.sinceNote?.contains("no value at /items/*/updatedAt") == true)
    }
}
