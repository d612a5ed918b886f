import CourierTestSupport
import Foundation
import Testing

/// `courier report` on hand-built logs with known figures, in every format.
@Suite("courier report")
struct ReportTests {
    /// 1,000 tasks t0…t999 taking 1…1000 ms, 10 ms apart; every hundredth fails with 500; t1…t5
    /// first get a 503 that takes 2 s and is retried. Split over two files (two shards), each
    /// ending in its `run.end` unless `ended` is false (a killed run's log).
    static func writeLogs(in folder: URL, ended: Bool = true) throws -> [URL] {
        func ts(_ milliseconds: Int) -> String {
            let seconds = milliseconds / 1000
            let ms = String(milliseconds % 1000 + 1000).dropFirst()
            let s = String(seconds % 60 + 100).dropFirst()
            let m = String(seconds / 60 + 100).dropFirst()
            return "2026-03-01T10:\(m):\(s).\(ms)Z"
        }
        var files: [[String]] = [[], []]
        for shard in 0..<2 {
            files[shard].append(
                #"{"event":"run.start","ts":"\#(ts(0))","run":"run\#(shard)","job":"nightly","jobFile":"j.json","jobSHA256":"x","backend":"curl","version":"0","tasks":1000,"shard":{"index":\#(shard),"count":2}}"#
            )
        }
        for index in 0..<1000 {
            let shard = index % 2
            let failed = index % 100 == 0
            if (1...5).contains(index) {
                files[shard].append(
                    #"{"event":"request","ts":"\#(ts(index * 10))","run":"run\#(shard)","job":"nightly","task":"t\#(index)","attempt":1,"method":"GET","url":"http://h/\#(index)","requestHeaders":{},"status":503,"bytesSent":0,"bytesReceived":0,"timings":{"dnsMs":null,"connectMs":null,"tlsMs":null,"firstByteMs":1990,"totalMs":2000},"outcome":"retry","retryInMs":5}"#
                )
            }
            let attempt = (1...5).contains(index) ? 2 : 1
            let error =
                failed
                ? #","error":{"kind":"unexpectedStatus","message":"status 500, expected 2xx"}"# : ""
            files[shard].append(
                #"{"event":"request","ts":"\#(ts(index * 10 + 5))","run":"run\#(shard)","job":"nightly","task":"t\#(index)","attempt":\#(attempt),"method":"GET","url":"http://h/\#(index)","requestHeaders":{},"status":\#(failed ? 500 : 200),"bytesSent":0,"bytesReceived":10,"timings":{"dnsMs":0.5,"connectMs":1,"tlsMs":null,"firstByteMs":\#(index),"totalMs":\#(index + 1)}\#(error),"outcome":"\#(failed ? "failed" : "ok")"}"#
            )
        }
        if ended {
            for shard in 0..<2 {
                files[shard].append(
                    #"{"event":"run.end","ts":"\#(ts(11_000))","run":"run\#(shard)","job":"nightly","durationMs":11000,"tasks":{"total":500,"ok":495,"failed":5},"requests":50\#(shard == 0 ? 2 : 3),"exitCode":1,"interrupted":false}"#
                )
            }
        }
        return try files.enumerated().map { shard, lines in
            let url = folder.appendingPathComponent("shard\(shard).jsonl")
            try (lines.joined(separator: "\n") + "\n").write(
                to: url, atomically: true, encoding: .utf8)
            return url
        }
    }

    static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-report-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// A failed night's report, read from another folder than the run's, says how to repair
    /// it with the job file's absolute path: the path the run was given was relative.
    @Test("the report's repair line works from any folder")
    func repairLineFromAnywhere() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(
            tasks: #"{"id": "gone", "path": "/status/404"}"#,
            extra: #""retry": {"maxAttempts": 1},"#)
        let run = try await space.run([], backend: "curl")
        #expect(run.status == 1)
        let report = try await CourierBinary.run(
            ["report", space.logs.appendingPathComponent("e2e").path],
            directory: URL(fileURLWithPath: "/"))
        let job = space.folder.appendingPathComponent("job.json").standardizedFileURL.path
        #expect(report.stdout.contains("courier run \(job) --resume"), "\(report.stdout)")
    }

    /// The per-task figures come from the job's current history, as `--resume`'s do: night 1
    /// did every task; night 2, a plain run, was killed before it reached `b`; its resume
    /// skipped `b` (its login refused). `b` is not done. The report had taken night 1's `ok`
    /// and called the job complete.
    @Test("a report folds only the job's current history: an earlier night's ok does not count")
    func currentHistoryOnly() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        func start(_ run: String, at second: Int, resumedFrom: String = "") -> String {
            let resumed = resumedFrom.isEmpty ? "" : #","resumedFrom":["\#(resumedFrom)"]"#
            return
                #"{"event":"run.start","ts":"2026-11-2\#(second)T02:00:00.000Z","run":"\#(run)","job":"nightly","jobFile":"j.json","jobSHA256":"x","backend":"curl","version":"0","tasks":2\#(resumed)}"#
        }
        func ok(_ run: String, _ task: String, at second: Int) -> String {
            #"{"event":"request","ts":"2026-11-2\#(second)T02:00:01.000Z","run":"\#(run)","job":"nightly","task":"\#(task)","attempt":1,"method":"GET","url":"http://h/\#(task)","requestHeaders":{},"status":200,"bytesSent":0,"bytesReceived":2,"timings":{"dnsMs":null,"connectMs":null,"tlsMs":null,"firstByteMs":1,"totalMs":1},"outcome":"ok"}"#
        }
        func end(_ run: String, at second: Int, ok: Int, failed: Int) -> String {
            #"{"event":"run.end","ts":"2026-11-2\#(second)T02:00:02.000Z","run":"\#(run)","job":"nightly","durationMs":2000,"tasks":{"total":\#(ok + failed),"ok":\#(ok),"failed":\#(failed)},"requests":\#(ok),"exitCode":\#(failed > 0 ? 1 : 0),"interrupted":false}"#
        }
        let night2 = folder.appendingPathComponent("2-night.jsonl").path
        let logs: [(String, [String])] = [
            (
                "1-night.jsonl",
                [
                    start("r1", at: 1), ok("r1", "a", at: 1), ok("r1", "b", at: 1),
                    end("r1", at: 1, ok: 2, failed: 0),
                ]
            ),
            ("2-night.jsonl", [start("r2", at: 2), ok("r2", "a", at: 2)]),
            (
                "3-resume.jsonl",
                [
                    start("r3", at: 3, resumedFrom: night2),
                    #"{"event":"task.skipped","ts":"2026-11-23T02:00:01.000Z","run":"r3","job":"nightly","task":"b","outcome":"skipped","error":{"kind":"skipped","message":"input task login did not succeed"}}"#,
                    end("r3", at: 3, ok: 0, failed: 1),
                ]
            ),
        ]
        for (name, lines) in logs {
            try (lines.joined(separator: "\n") + "\n").write(
                to: folder.appendingPathComponent(name), atomically: false, encoding: .utf8)
        }
        let result = try await CourierBinary.run(["report", "--json", folder.path])
        #expect(result.status == 0, "\(result.stderr)")
        let root = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let job = try #require((root["jobs"] as? [[String: Any]])?.first)
        #expect(job["complete"] as? Bool == false, "\(result.stdout)")
        let tasks = job["tasks"] as? [String: Int]
        #expect(tasks?["ok"] == 1 && tasks?["skipped"] == 1, "\(result.stdout)")
        // Every night's requests still count.
        #expect(job["requests"] as? Int == 3, "\(result.stdout)")
    }

    @Test("figures match a hand-built log with known percentiles, merged over two shards")
    func knownFigures() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let logs = try Self.writeLogs(in: folder)
        let result = try await CourierBinary.run(["report", "--json"] + logs.map(\.path))
        #expect(result.status == 0, "\(result.stderr)")
        let root = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let job = try #require((root["jobs"] as? [[String: Any]])?.first)
        #expect(job["runs"] as? [String] == ["run0", "run1"])
        #expect(
            job["tasks"] as? [String: Int] == [
                "total": 1000, "ok": 990, "failed": 10, "skipped": 0, "notModified": 0,
            ])
        #expect(job["requests"] as? Int == 1005)
        #expect(job["retries"] as? Int == 5)
        #expect(job["attemptsPerTask"] as? [String: Int] == ["1": 995, "2": 5])
        #expect(job["statuses"] as? [String: Int] == ["200": 990, "500": 10, "503": 5])
        #expect(job["errorKinds"] as? [String: Int] == ["unexpectedStatus": 10])
        let total = try #require(
            (job["latency"] as? [String: Any])?["totalMs"] as? [String: Double])
        // 1,005 samples: 1…1000 ms and five of 2,000 ms. Ranks by nearest-rank: p50 → 503,
        // p90 → 905, p99 → 995, p99.9 → 2000. The histogram is within 1/64 above.
        for (key, expected) in [("p50", 503.0), ("p90", 905.0), ("p99", 995.0), ("p999", 2000.0)] {
            let value = try #require(total[key])
            #expect(value >= expected && value <= expected * (1 + 1.0 / 64), "\(key) = \(value)")
        }
        #expect(total["max"] == 2000)
        #expect(total["count"] == 1005)
        // From the first start (0 s) to the last end (9.995 s + 1 s).
        let rate = try #require(job["requestsPerSecond"] as? Double)
        #expect(abs(rate - 1005 / 10.995) < 0.5, "\(rate)")
        let failed = try #require(job["failed"] as? [[String: Any]])
        #expect(failed.count == 10)
        #expect(failed.first?["task"] as? String == "t0")
        #expect(failed.first?["message"] as? String == "status 500, expected 2xx")
        let slowest = try #require(job["slowest"] as? [[String: Any]])
        #expect(slowest.first?["task"] as? String == "t999", "the slowest final attempt")
    }

    @Test("a folder stands for every log under it; the figures are those of its files")
    func folderOfLogs() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let logs = try Self.writeLogs(in: folder)
        let byFiles = try await CourierBinary.run(["report", "--json"] + logs.map(\.path))
        let byFolder = try await CourierBinary.run(["report", "--json", folder.path])
        #expect(byFolder.status == 0, "\(byFolder.stderr)")
        #expect(byFolder.stdout == byFiles.stdout)
        #expect(byFolder.stdout.contains(#""total":1000"#))
    }

    @Test("text on a terminal, and the report of stdin")
    func textAndStdin() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let logs = try Self.writeLogs(in: folder)
        let result = try await CourierBinary.run(
            [
                "-c",
                "cat '\(logs[0].path)' '\(logs[1].path)' | '\(CourierBinary.url.path)' report -",
            ],
            executable: URL(fileURLWithPath: "/bin/bash"))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("tasks     1000 total, 990 ok, 10 failed, 0 skipped"))
        #expect(result.stdout.contains("requests  1005 (5 retries)"))
        #expect(
            result.stdout.contains("10 × unexpectedStatus: status 500, expected 2xx"),
            "\(result.stdout)")
        #expect(result.stdout.contains("t0, t100, t200, t300, t400 and 5 more"))
        let missing = try await CourierBinary.run(["report", "/no/such.jsonl"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("/no/such.jsonl: cannot read"))
    }

    @Test("--json validates against its schema, JUnit parses, the HTML shows its charts")
    func formatsAsPeopleAndMachinesReadThem() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let logs = try Self.writeLogs(in: folder)
        let junit = folder.appendingPathComponent("report.xml")
        let html = folder.appendingPathComponent("report.html")
        let json = folder.appendingPathComponent("report.json")
        let result = try await CourierBinary.run(
            ["report", "--json", "--junit", junit.path, "--html", html.path] + logs.map(\.path))
        #expect(result.status == 0, "\(result.stderr)")
        try result.stdout.write(to: json, atomically: true, encoding: .utf8)
        let page = try String(contentsOf: html, encoding: .utf8)
        #expect(page.components(separatedBy: "<svg").count - 1 == 4, "four charts")
        #expect(!page.contains("<script") && !page.contains("src=") && !page.contains("<link"))

        // A real browser renders it; the screenshot has the charts' blue and red in it.
        let shot = folder.appendingPathComponent("shot.png")
        let browser = try await CourierBinary.run(
            [
                "-c",
                "timeout 90 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1000,1300 --screenshot='\(shot.path)' 'file://\(html.path)'",
            ], executable: URL(fileURLWithPath: "/bin/bash"))
        #expect(FileManager.default.fileExists(atPath: shot.path), "chromium: \(browser.stderr)")

        let schema = PackagePaths.root.appendingPathComponent("docs/report.schema.json")
        let checker = PackagePaths.fixtures.appendingPathComponent("check_report.py")
        let check = try await CourierBinary.run(
            [checker.path, schema.path, json.path, junit.path, shot.path],
            executable: URL(fileURLWithPath: "/usr/bin/python3"))
        #expect(check.status == 0, "\(check.stderr)")
        let verdicts = check.stdout.split(separator: "\n").map(String.init)
        #expect(verdicts.first == "json ok", "\(verdicts)")
        #expect(verdicts.dropFirst().first == "junit ok 1000 10", "\(verdicts)")
        let png = verdicts.last?.split(separator: " ").compactMap { Int($0) } ?? []
        #expect(png.count == 4, "\(verdicts)")
        if png.count == 4 {
            #expect(png[0] == 1000 && png[1] == 1300)
            #expect(png[2] > 2000, "blue chart marks: \(png[2]) pixels")
            // Ten failures: how many red pixels they make depends on where they fall in time
            // (a loaded test run bunches them: 80 seen); none at all would be the defect.
            #expect(png[3] > 20, "red marks for failures: \(png[3]) pixels")
        }
    }
}
