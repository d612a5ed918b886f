import CourierTestSupport
import Foundation
import Testing

/// A request's `ts` is when it went to the transport, after its wait for the rate limit; the
/// wait is `blockedMs`, and the report, the HAR export and the spans read both. Before, six
/// requests at two a second were logged with one `ts`, and the report said ~850 req/s.
@Suite("request times under a rate limit")
struct RequestTimeTests {
    static func date(_ text: String) -> Double? {
        let format = Date.ISO8601FormatStyle.iso8601.year().month().day()
            .time(includingFractionalSeconds: true)
        return (try? Date(text, strategy: format))?.timeIntervalSince1970
    }

    @Test(
        "six requests at two a second: logged when sent, the wait beside, as the server saw them",
        arguments: RunCommandTests.backends)
    func rateLimitedTimes(backend: String) async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let key = FixtureServer.uniqueKey("paced")
        try space.writeJob(
            tasks:
                #"{"id": "p{n}", "path": "/echo", "query": {"key": "\#(key)", "n": "{n}"}, "foreach": {"n": {"range": [1, 6]}}}"#,
            extra: #""concurrency": 6, "rateLimit": {"perSecond": 2, "burst": 1},"#)
        let result = try await space.run(backend: backend)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try space.logLines().filter { $0["event"] as? String == "request" }
        #expect(lines.count == 6)
        let stamps = lines.compactMap { ($0["ts"] as? String).flatMap(Self.date) }.sorted()
        #expect(stamps.count == 6)
        // When each asked for a token: `ts` less its wait.
        let asked = lines.compactMap { line in
            (line["ts"] as? String).flatMap(Self.date).map {
                $0 - ((line["blockedMs"] as? NSNumber)?.doubleValue ?? 0) / 1000
            }
        }
        // A token every 0.5 s, one kept at most: the k-th request (from 0) reaches the server
        // no sooner than k × 0.5 s after the first asked (5 ms for the millisecond stamps and
        // the clocks' reading). Lower bounds from the first ask, on the server's arrivals: a
        // request's `ts` is its start plus its wait, and the start is stamped a moment before
        // the rate limit is asked, so a loaded machine logs a `ts` up to that moment before its
        // token (seen: 48 ms), and gaps between neighbours are bounded by nothing.
        let first = asked.min() ?? 0
        let arrivals = try await ServerHits.of(key, on: space.server).requests.map(\.time)
            .sorted()
        #expect(arrivals.count == 6)
        for (index, arrival) in arrivals.enumerated() {
            #expect(
                arrival >= first + Double(index) * 0.5 - 0.005,
                "request \(index) arrived \(arrival - first) s after the first asked: \(arrivals)")
        }
        // Each logged when it went out, not all at the start (they once had one `ts`), and
        // sent no sooner than logged (the log's clock and the server's are this machine's).
        #expect(Set(stamps).count > 1, "\(stamps)")
        for (stamp, arrival) in zip(stamps, arrivals) {
            #expect(arrival >= stamp - 0.005, "arrived \(arrival) before it was sent \(stamp)")
        }
        let blocked = lines.compactMap { ($0["blockedMs"] as? NSNumber)?.doubleValue }

        // The report's rate is the requests' own, not the queue's.
        let log = try #require(
            try FileManager.default.contentsOfDirectory(
                atPath: space.logs.appendingPathComponent("e2e").path
            ).first { $0.hasSuffix(".jsonl") })
        let path = space.logs.appendingPathComponent("e2e/\(log)").path
        let report = try await CourierBinary.run(["report", "--json", path])
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(report.stdout.utf8)) as? [String: Any])
        let job = try #require((json["jobs"] as? [[String: Any]])?.first)
        let rate = try #require((job["requestsPerSecond"] as? NSNumber)?.doubleValue)
        // From the first request's start to the last one's end: no more than six over the
        // logged span (before, every request had one `ts`, and the rate was ~850 req/s).
        #expect(rate <= 6 / max(0.001, stamps[5] - stamps[0]) + 0.01, "\(rate) req/s: \(stamps)")
        let reportBlocked = try #require(job["blocked"] as? [String: Any])
        #expect(reportBlocked["requests"] as? Int == blocked.count)

        // HAR: each entry starts before its wait, which is its timings.blocked.
        let har = try await CourierBinary.run(["export", "--har", path])
        let entries = try #require(
            ((try JSONSerialization.jsonObject(with: Data(har.stdout.utf8)) as? [String: Any])?[
                "log"] as? [String: Any])?["entries"] as? [[String: Any]])
        #expect(entries.count == 6)
        // Entries are oldest first, not in the log's order: each is paired with its task's line.
        for entry in entries {
            let task = (entry["_courier"] as? [String: Any])?["task"] as? String
            let line = try #require(lines.first { $0["task"] as? String == task }, "\(entry)")
            let started = try #require((entry["startedDateTime"] as? String).flatMap(Self.date))
            let stamp = try #require((line["ts"] as? String).flatMap(Self.date))
            let waited = (line["blockedMs"] as? NSNumber)?.doubleValue ?? 0
            let timings = try #require(entry["timings"] as? [String: Any])
            #expect((timings["blocked"] as? NSNumber)?.doubleValue == (waited > 0 ? waited : -1))
            #expect(abs(started + waited / 1000 - stamp) < 0.002, "\(entry)")
        }
    }
}
