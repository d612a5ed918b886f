import CourierTestSupport
import Foundation
import Testing

/// `courier report` on hand-built logs: what each format shows of runs that did not finish,
/// of failures, and of a run without any.
@Suite("courier report: formats")
struct ReportFormatTests {
    /// A one-run log of `count` tasks, all ok and each taking `totalMs`, with a `run.end`.
    static func okLog(in folder: URL, count: Int, totalMs: String, status: Int = 200) throws
        -> URL
    {
        var lines = [
            #"{"event":"run.start","ts":"2026-03-01T10:00:00.000Z","run":"okrun","job":"calm","jobFile":"j.json","jobSHA256":"x","backend":"curl","version":"0","tasks":\#(count)}"#
        ]
        for index in 0..<count {
            lines.append(
                #"{"event":"request","ts":"2026-03-01T10:00:0\#(index % 10).000Z","run":"okrun","job":"calm","task":"c\#(index)","attempt":1,"method":"GET","url":"http://h/","requestHeaders":{},"status":\#(status),"bytesSent":0,"bytesReceived":1,"timings":{"dnsMs":null,"connectMs":null,"tlsMs":null,"firstByteMs":null,"totalMs":\#(totalMs)},"outcome":"ok"}"#
            )
        }
        lines.append(
            #"{"event":"run.end","ts":"2026-03-01T10:00:10.000Z","run":"okrun","job":"calm","durationMs":10000,"tasks":{"total":\#(count),"ok":\#(count),"failed":0},"requests":\#(count),"exitCode":0,"interrupted":false}"#
        )
        let url = folder.appendingPathComponent("calm.jsonl")
        try (lines.joined(separator: "\n") + "\n").write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    /// Trial BB: the text report said 277 requests waited 60.2 s for the rate limit, and the
    /// HTML page showed only the time waited for hosts, 0 s.
    @Test("the HTML page shows the time requests waited before going out, as the text does")
    func htmlShowsTheWaitBeforeGoingOut() async throws {
        let folder = try ReportTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = try Self.okLog(in: folder, count: 2, totalMs: "1.5")
        let text = try String(contentsOf: log, encoding: .utf8)
        try text.replacingOccurrences(
            of: #""outcome":"ok""#, with: #""outcome":"ok","blockedMs":1250"#
        )
        .write(to: log, atomically: true, encoding: .utf8)
        let html = folder.appendingPathComponent("report.html")
        let report = try await CourierBinary.run(["report", "--html", html.path, log.path])
        #expect(report.status == 0, "\(report.stderr)")
        #expect(report.stdout.contains("2 requests waited 2.50 s"), "\(report.stdout)")
        let page = try String(contentsOf: html, encoding: .utf8)
        #expect(page.contains("<th>waited before going out</th>"))
        #expect(page.contains("<td>2.50 s (2)</td>"), "\(page)")
    }

    /// Trial GG: a 2 GiB sparse file (one line of NULs) had `report` hold it all, searching it
    /// again with each chunk read (35 minutes, memory climbing); `/dev/zero` never ended.
    @Test("a line longer than 64 MiB is skipped, said, and the lines around it read")
    func overlongLineIsSkipped() async throws {
        let folder = try ReportTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = try Self.okLog(in: folder, count: 2, totalMs: "1.5")
        let lines = try String(contentsOf: log, encoding: .utf8).split(separator: "\n")
        // run.start, the first request line, 100 MiB of NULs (a hole: no disk), the rest.
        try (lines.prefix(2).joined(separator: "\n") + "\n").write(
            to: log, atomically: true, encoding: .utf8)
        let handle = try FileHandle(forWritingTo: log)
        let size = try handle.seekToEnd()
        try handle.truncate(atOffset: size + (100 << 20))
        try handle.seekToEnd()
        try handle.write(
            contentsOf: Data(("\n" + lines.dropFirst(2).joined(separator: "\n") + "\n").utf8))
        try handle.close()
        let report = try await CourierBinary.run(["report", "--json", log.path])
        #expect(report.status == 0, "\(report.stderr)")
        #expect(report.stderr.contains(":3: a line longer than 64 MiB"), "\(report.stderr)")
        #expect(report.stdout.contains(#""total":2"#), "\(report.stdout.prefix(400))")
        let device = try await CourierBinary.run(["report", "/dev/zero"])
        #expect(device.status == 2 && device.stderr.contains("is a device"), "\(device.stderr)")
    }

    /// Trial K: `report --junit /no/dir/x.xml` made `/no/dir` (as root, at the root).
    @Test("a file named for --junit, --html, --otlp or export -o goes in a folder that exists")
    func outputFolderMustExist() async throws {
        let folder = try ReportTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = try Self.okLog(in: folder, count: 2, totalMs: "1.5")
        let missing = folder.appendingPathComponent("no/such")
        for flag in ["--junit", "--html", "--otlp"] {
            let target = missing.appendingPathComponent("out").path
            let report = try await CourierBinary.run(["report", flag, target, log.path])
            #expect(report.status == 2, "\(flag): \(report.stderr)")
            #expect(report.stderr.contains("does not exist"), "\(flag): \(report.stderr)")
        }
        let export = try await CourierBinary.run([
            "export", "--har", log.path, "-o", missing.appendingPathComponent("x.har").path,
        ])
        #expect(export.status == 2, "\(export.stderr)")
        #expect(
            !FileManager.default.fileExists(atPath: folder.appendingPathComponent("no").path),
            "no folder made")
        let junit = folder.appendingPathComponent("junit.xml")
        let made = try await CourierBinary.run(["report", "--junit", junit.path, log.path])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(FileManager.default.fileExists(atPath: junit.path))
    }

    @Test("logs without run.end are killed runs, with how many tasks they recorded")
    func logWithoutRunEndIsKilled() async throws {
        let folder = try ReportTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let logs = try ReportTests.writeLogs(in: folder, ended: false)
        let html = folder.appendingPathComponent("report.html")
        let text = try await CourierBinary.run(["report", "--html", html.path] + logs.map(\.path))
        #expect(text.status == 0, "\(text.stderr)")
        // Each shard recorded its 500; the job's 1,000 are split over two shards.
        #expect(
            text.stdout.contains("killed: 500 tasks recorded (shard 0/2 of a job of 1,000 tasks)"),
            "\(text.stdout)")
        // The task count is what was recorded, not the job's size (trial K read it as such).
        #expect(text.stdout.contains("tasks     1000 recorded (a cut run's"), "\(text.stdout)")
        let page = try String(contentsOf: html, encoding: .utf8)
        #expect(page.contains("killed: 500 tasks recorded (shard 1/2 of a job of 1,000 tasks)"))

        let json = try await CourierBinary.run(["report", "--json"] + logs.map(\.path))
        #expect(json.stdout.contains(#""state":"killed","recordedTasks":500"#), "\(json.stdout)")
        // A killed run's row is what the schema says one is.
        let saved = folder.appendingPathComponent("killed.json")
        try json.stdout.write(to: saved, atomically: true, encoding: .utf8)
        let check = try await CourierBinary.run(
            [
                PackagePaths.fixtures.appendingPathComponent("check_schema.py").path,
                PackagePaths.root.appendingPathComponent("docs/report.schema.json").path,
                saved.path,
            ], executable: URL(fileURLWithPath: "/usr/bin/python3"))
        #expect(check.stdout == "\(saved.path): ok\n", "\(check.stdout) \(check.stderr)")

        // The same logs with their run.end lines: finished, with the counts run.end gives.
        let ended = try ReportTests.writeLogs(in: folder)
        let finished = try await CourierBinary.run(["report"] + ended.map(\.path))
        #expect(!finished.stdout.contains("killed"), "\(finished.stdout)")
        #expect(finished.stdout.contains("2026-03-01 10:00:00Z"), "start times in UTC")
    }

    @Test("a log from before run.start carried its task count still reads as killed")
    func oldLogWithoutTaskCount() async throws {
        let folder = try ReportTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = try Self.okLog(in: folder, count: 3, totalMs: "1")
        let text =
            try String(contentsOf: log, encoding: .utf8)
            .replacingOccurrences(of: #","tasks":3}"#, with: "}")
            .split(separator: "\n").dropLast().joined(separator: "\n") + "\n"
        try text.write(to: log, atomically: true, encoding: .utf8)
        let result = try await CourierBinary.run(["report", log.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("killed: 3 tasks recorded"), "\(result.stdout)")
    }

    @Test("identical failures are one group with a count, first and last time and a few ids")
    func identicalFailuresAreGrouped() async throws {
        let folder = try ReportTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let logs = try ReportTests.writeLogs(in: folder)
        let html = folder.appendingPathComponent("report.html")
        let text = try await CourierBinary.run(["report", "--html", html.path] + logs.map(\.path))
        #expect(
            text.stdout.contains("10 × unexpectedStatus: status 500, expected 2xx"),
            "\(text.stdout)")
        #expect(!text.stdout.contains("t900:"), "not one line per task")

        let json = try await CourierBinary.run(["report", "--json"] + logs.map(\.path))
        let root = try #require(
            try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let job = try #require((root["jobs"] as? [[String: Any]])?.first)
        let groups = try #require(job["failureGroups"] as? [[String: Any]])
        #expect(groups.count == 1, "\(groups)")
        #expect(groups.first?["count"] as? Int == 10)
        #expect(groups.first?["errorKind"] as? String == "unexpectedStatus")
        #expect(groups.first?["first"] as? String == "2026-03-01T10:00:00.005Z")
        #expect(groups.first?["last"] as? String == "2026-03-01T10:00:09.005Z")
        #expect((groups.first?["tasks"] as? [String])?.prefix(2) == ["t0", "t100"])

        let page = try String(contentsOf: html, encoding: .utf8)
        #expect(page.components(separatedBy: "status 500, expected 2xx").count - 1 == 1)
    }

    @Test("a run without failures raises no alarm; JUnit times are plain decimals")
    func calmRun() async throws {
        let folder = try ReportTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // 0.005 ms is 5e-06 s: a number JUnit readers parse as a decimal only if written so.
        let log = try Self.okLog(in: folder, count: 3, totalMs: "0.005")
        let html = folder.appendingPathComponent("report.html")
        let junit = folder.appendingPathComponent("report.xml")
        let result = try await CourierBinary.run(
            ["report", "--html", html.path, "--junit", junit.path, log.path])
        #expect(result.status == 0, "\(result.stderr)")
        let xml = try String(contentsOf: junit, encoding: .utf8)
        #expect(!xml.contains("e-0"), "\(xml)")
        #expect(xml.contains(#"time="0.000005""#), "\(xml)")
        let page = try String(contentsOf: html, encoding: .utf8)
        #expect(!page.contains("class=\"fail\""), "zero failures in alarm red")
        #expect(!page.contains("#d92d20"), "no red in the charts")
        #expect(!page.lowercased().contains("failed tasks"))
    }

    /// Trial UUU: a run whose every answer was the 404 its job expects, every task ok, was
    /// drawn red: "failed or retried" points, a red "404" bar.
    @Test("answers the job expects, 404s too, are not drawn as failures")
    func expectedStatusesAreCalm() async throws {
        let folder = try ReportTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = try Self.okLog(in: folder, count: 3, totalMs: "2", status: 404)
        let html = folder.appendingPathComponent("report.html")
        let result = try await CourierBinary.run(["report", "--html", html.path, log.path])
        #expect(result.status == 0, "\(result.stderr)")
        let page = try String(contentsOf: html, encoding: .utf8)
        #expect(page.contains(">404<") || page.contains("404"), "the status is drawn")
        #expect(!page.contains("#d92d20"), "no red in the charts")
    }
}
