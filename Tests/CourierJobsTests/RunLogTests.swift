import Courier
import Foundation
import Testing

@testable import CourierJobs

/// Every field of a request line, from an attempt built by hand.
@Suite("RunLog")
struct RunLogTests {
    func withLog(_ body: (RunLog) throws -> Void) throws -> [[String: Any]] {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "runlog-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: file) }
        let log = RunLog(
            writer: try LogWriter(url: file), run: "r1", job: "j",
            redactor: Redactor(secrets: ["s3cret"]))
        try body(log)
        let text = try String(contentsOf: file, encoding: .utf8)
        return try text.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    @Test func aTokenLineHoldsNoHeaderNorBody() throws {
        let request = HTTPRequest(
            url: URL(string: "https://auth.example/token?tenant=s3cret")!, method: .post,
            headers: ["Authorization": "Basic Y2xpZW50OnMzY3JldA=="],
            body: Data("grant_type=client_credentials&client_secret=s3cret".utf8))
        let response = HTTPResponse(
            status: 400, headers: ["Content-Type": "application/json"],
            body: Data(#"{"error": "invalid_client"}"#.utf8), url: request.url,
            timings: HTTPTimings(total: 0.002))
        let attempt = RetryAttempt(
            request: request, number: 1, outcome: .success(response), retryDelay: nil,
            duration: 0.002, started: Date(timeIntervalSince1970: 0))
        let lines = try withLog {
            try $0.token(
                url: request.displayURL, grant: "client_credentials", attempt: attempt,
                outcome: .failed, failure: ("token", "token endpoint answered 400: invalid_client"))
        }
        let line = try #require(lines.first)
        #expect(line["event"] as? String == "token")
        #expect(line["url"] as? String == "https://auth.example/token?tenant=<redacted>")
        #expect(line["grant"] as? String == "client_credentials")
        #expect(line["attempt"] as? Int == 1 && line["status"] as? Int == 400)
        #expect(line["outcome"] as? String == "failed")
        let error = try #require(line["error"] as? [String: Any])
        #expect(error["kind"] as? String == "token")
        #expect((error["message"] as? String)?.contains("invalid_client") == true)
        #expect((line["timings"] as? [String: Any])?["totalMs"] as? Double == 2)
        for field in ["requestHeaders", "responseHeaders", "requestBody", "task"] {
            #expect(line[field] == nil, "\(field)")
        }
    }

    @Test func successfulRedirectedAttempt() throws {
        var request = HTTPRequest(
            url: URL(string: "http://u:pw@h.example/a?k=s3cret")!, method: .post,
            headers: ["Authorization": "Bearer x", "X-Plain": "v"], body: Data(#"{"n":1.50}"#.utf8))
        request.secretQueryNames.insert("k")
        let response = HTTPResponse(
            status: 201, headers: ["Set-Cookie": "a=b", "Content-Type": "application/json"],
            body: Data("hello".utf8), url: URL(string: "http://h.example/b")!, redirectCount: 1,
            timings: HTTPTimings(dns: 0.001, connect: 0.002, firstByte: 0.003, total: 0.004),
            requestHeaders: ["Authorization": "Bearer x", "X-Plain": "v", "Cookie": "c=d"])
        let attempt = RetryAttempt(
            request: request, number: 2, outcome: .success(response), retryDelay: nil,
            duration: 0.005, started: Date(timeIntervalSince1970: 0))
        let lines = try withLog {
            try $0.request(
                AttemptRecord(task: "t1", attempt: attempt, outcome: .ok, savedTo: "out/x.json"))
        }
        let line = try #require(lines.first)
        #expect(line["event"] as? String == "request")
        #expect(line["ts"] as? String == "1970-01-01T00:00:00.000Z")
        #expect(line["run"] as? String == "r1" && line["job"] as? String == "j")
        #expect(line["task"] as? String == "t1" && line["attempt"] as? Int == 2)
        #expect(line["method"] as? String == "POST")
        #expect(line["url"] as? String == "http://h.example/a?k=redacted")
        // The request's URL held a secret (`k`): the server's target is its origin alone.
        #expect(line["finalURL"] as? String == "http://h.example/<redacted>")
        #expect(line["redirects"] as? Int == 1)
        #expect(line["status"] as? Int == 201)
        #expect(
            line["requestHeaders"] as? [String: String]
                == ["Authorization": "<redacted>", "X-Plain": "v", "Cookie": "<redacted>"])
        #expect(
            line["responseHeaders"] as? [String: String]
                == ["Set-Cookie": "<redacted>", "Content-Type": "application/json"])
        #expect(line["requestBody"] != nil)
        #expect(line["bytesSent"] as? Int == 10 && line["bytesReceived"] as? Int == 5)
        let timings = try #require(line["timings"] as? [String: Any])
        #expect(timings["dnsMs"] as? Double == 1 && timings["totalMs"] as? Double == 4)
        #expect(timings["tlsMs"] is NSNull)
        #expect(line["outcome"] as? String == "ok")
        #expect(line["savedTo"] as? String == "out/x.json")
        #expect(line["error"] == nil && line["retryInMs"] == nil)
    }

    @Test func failedAttemptWithRetry() throws {
        let request = HTTPRequest(url: URL(string: "http://h.example/x?t=s3cret")!)
        let attempt = RetryAttempt(
            request: request, number: 1,
            outcome: .failure(HTTPError(.connect, "refused s3cret", url: request.url)),
            retryDelay: 0.25, duration: 0.01, started: Date())
        let lines = try withLog {
            try $0.request(AttemptRecord(task: "t", attempt: attempt, outcome: .retry))
        }
        let line = try #require(lines.first)
        #expect(line["status"] == nil && line["finalURL"] == nil)
        #expect(line["url"] as? String == "http://h.example/x?t=<redacted>")
        #expect((line["error"] as? [String: String])?["kind"] == "connect")
        #expect((line["error"] as? [String: String])?["message"] == "refused <redacted>")
        #expect(line["retryInMs"] as? Double == 250)
        #expect(line["outcome"] as? String == "retry")
        let headers = try #require(line["requestHeaders"] as? [String: String])
        #expect(headers["User-Agent"]?.hasPrefix("courier/") == true, "the defaults that were sent")
    }

    @Test func startAndEnd() throws {
        let lines = try withLog {
            try $0.runStart(jobFile: "jobs/x.json", sha256: "abc", backend: .curl)
            try $0.runEnd(
                duration: 1.5, total: 3, ok: 2, failed: 1, requests: 4, exitCode: 1,
                interrupted: false)
        }
        #expect(lines.count == 2)
        #expect(
            lines[0]["event"] as? String == "run.start" && lines[0]["backend"] as? String == "curl")
        #expect(lines[0]["jobSHA256"] as? String == "abc" && lines[0]["version"] != nil)
        #expect(lines[1]["durationMs"] as? Double == 1500)
        #expect(lines[1]["tasks"] as? [String: Int] == ["total": 3, "ok": 2, "failed": 1])
        #expect(lines[1]["requests"] as? Int == 4 && lines[1]["exitCode"] as? Int == 1)
        #expect(lines[1]["interrupted"] as? Bool == false)
    }

    /// The reader reads what the writer wrote: the run's own fields, which `courier report`
    /// needs to tell a finished run from a killed one.
    @Test func startAndEndRoundTripThroughTheReader() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "runlog-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: file) }
        let log = RunLog(
            writer: try LogWriter(url: file), run: "r1", job: "j", redactor: Redactor(secrets: []))
        try log.runStart(
            jobFile: "jobs/x.json", sha256: "abc", backend: .curl, tasks: 25_001, fanOut: true,
            resumedFrom: ["/l/a.jsonl"], shard: Shard(index: 2, count: 4))
        try log.runEnd(
            duration: 1.5, total: 9, ok: 7, failed: 2, requests: 11, exitCode: 130,
            interrupted: true, alreadyDone: 3)
        let lines = LogReader(paths: [file.path], warn: { Issue.record("\($0)") }).map(\.line)
        #expect(lines.count == 2)
        let start = try #require(lines.first?.runFields)
        #expect(start.plannedTasks == 25_001 && start.fanOut)
        #expect(start.shardIndex == 2 && start.shardCount == 4)
        #expect(start.jobFile == "jobs/x.json")
        #expect(lines.first?.resumedFrom == ["/l/a.jsonl"])
        let end = try #require(lines.last?.runFields)
        #expect(end.durationMs == 1500 && end.exitCode == 130 && end.interrupted)
        #expect(end.total == 9 && end.ok == 7 && end.failed == 2 && end.alreadyDone == 3)

        // A run.start without the newer keys (an older log) reads with them absent.
        let old = try #require(
            LogLine(
                bytes: Array(
                    #"{"event":"run.start","ts":"2026-11-23T10:00:00.000Z","run":"r0","job":"j","jobFile":"j.json"}"#
                        .utf8)[...]))
        #expect(old.runFields?.plannedTasks == nil && old.runFields?.fanOut == false)
    }
}
