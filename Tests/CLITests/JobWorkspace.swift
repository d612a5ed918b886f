import CourierTestSupport
import Foundation
import Testing

/// A temporary folder with a job file, its logs and outputs, and helpers to run `courier` on it
/// and read what it wrote.
struct JobWorkspace {
    let folder: URL
    let server: FixtureServer

    init() throws {
        server = try TestServers.fixture()
        folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    var logs: URL { folder.appendingPathComponent("logs") }

    /// Writes `job.json`: the given tasks (JSON text) against the fixture server.
    func writeJob(name: String = "e2e", tasks: String, extra: String = "") throws {
        let text =
            #"{"version": 1, "name": "\#(name)", "baseURL": "\#(server.baseURL.absoluteString)", "outputDir": "out", \#(extra) "tasks": [\#(tasks)]}"#
        try text.write(
            to: folder.appendingPathComponent("job.json"), atomically: true, encoding: .utf8)
    }

    func run(_ extra: [String] = [], backend: String, environment: [String: String] = [:])
        async throws -> CourierBinary.Result
    {
        try await CourierBinary.run(
            ["run", "job.json", "--log-dir", logs.path, "--backend", backend, "--no-progress"]
                + extra,
            environment: environment, directory: folder)
    }

    /// Every line of every log file, parsed; records an issue for a line that is not JSON.
    func logLines(job: String = "e2e") throws -> [[String: Any]] {
        try Self.logLines(in: logs.appendingPathComponent(job))
    }

    /// Every line of every log file in `folder` (a job's log folder), parsed.
    static func logLines(in folder: URL) throws -> [[String: Any]] {
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
            $0.hasSuffix(".jsonl")
        }
        var lines: [[String: Any]] = []
        for file in files.sorted() {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            #expect(text.hasSuffix("\n"), "every line is newline-terminated")
            for line in text.split(separator: "\n") {
                guard
                    let object = try? JSONSerialization.jsonObject(with: Data(line.utf8))
                        as? [String: Any]
                else {
                    Issue.record("log line is not a JSON object: \(line)")
                    continue
                }
                lines.append(object)
            }
        }
        return lines
    }

    /// The log's request lines for one task, in attempt order.
    func attempts(_ task: String, job: String = "e2e") throws -> [[String: Any]] {
        try logLines(job: job).filter {
            $0["event"] as? String == "request" && $0["task"] as? String == task
        }
        .sorted { ($0["attempt"] as? Int ?? 0) < ($1["attempt"] as? Int ?? 0) }
    }

    /// Every byte courier wrote: logs and outputs.
    func everyWrittenByte() throws -> Data {
        var data = Data()
        let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)
        while let url = enumerator?.nextObject() as? URL {
            if url.lastPathComponent != "job.json",
                let contents = FileManager.default.contents(atPath: url.path)
            {
                data.append(contents)
            }
        }
        return data
    }

    func remove() { try? FileManager.default.removeItem(at: folder) }
}

/// The documented fields of each log event (docs/log-format.md).
enum LogContract {
    static let runStart = [
        "event", "ts", "run", "job", "jobFile", "jobSHA256", "backend", "version", "tasks",
    ]
    static let request = [
        "event", "ts", "run", "job", "task", "attempt", "method", "url", "requestHeaders",
        "bytesSent",
        "bytesReceived", "timings", "outcome",
    ]
    static let requestStart = ["event", "ts", "run", "job", "task", "method", "url"]
    static let skipped = ["event", "ts", "run", "job", "task", "outcome", "error"]
    static let token = [
        "event", "ts", "run", "job", "url", "grant", "attempt", "timings", "outcome",
    ]
    static let ping = ["event", "ts", "run", "job", "ping", "attempts", "durationMs", "outcome"]
    static let runEnd = [
        "event", "ts", "run", "job", "durationMs", "tasks", "requests", "exitCode", "interrupted",
    ]

    /// Records an issue for any line missing a documented field; checks the file's shape.
    static func check(_ lines: [[String: Any]]) {
        #expect(lines.first?["event"] as? String == "run.start")
        #expect(lines.last?["event"] as? String == "run.end")
        for line in lines {
            let fields: [String]
            switch line["event"] as? String {
            case "run.start": fields = runStart
            case "request": fields = request
            case "request.start":
                fields = requestStart
                #expect(["POST", "PATCH"].contains(line["method"] as? String ?? ""))
            case "run.end": fields = runEnd
            case "token":
                fields = token
                #expect(["ok", "retry", "failed"].contains(line["outcome"] as? String ?? ""))
            case "ping":
                fields = ping
                #expect(["ok", "failed"].contains(line["outcome"] as? String ?? ""))
                #expect(line["url"] == nil && line["task"] == nil, "a ping line names no URL")
            case "task.skipped":
                fields = skipped
                #expect(line["outcome"] as? String == "skipped")
            case "task.failed":
                fields = skipped
                #expect(line["outcome"] as? String == "failed")
            default:
                Issue.record("unknown event in \(line)")
                continue
            }
            for field in fields where line[field] == nil {
                Issue.record("\(line["event"] ?? "?") line lacks \(field)")
            }
            if let ts = line["ts"] as? String {
                #expect(
                    ts.count == 24 && ts.hasSuffix("Z"), "RFC 3339 UTC with milliseconds: \(ts)")
            }
            if line["event"] as? String == "request" {
                #expect(
                    ["ok", "retry", "failed", "page"].contains(line["outcome"] as? String ?? ""))
                if let timings = line["timings"] as? [String: Any] {
                    for key in ["dnsMs", "connectMs", "tlsMs", "firstByteMs", "totalMs"]
                    where timings.index(forKey: key) == nil {
                        Issue.record("timings lack \(key)")
                    }
                }
            }
        }
    }
}
