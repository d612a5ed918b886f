import CourierTestSupport
import Foundation
import Testing

/// README's sample, run as README runs it: the first ```json block after the
/// `<!-- readme-sample` comment is `jobs/sample.json`; pointed at the fixture server,
/// `courier run jobs/sample.json` exits 0 and prints a summary line of the shape README shows.
@Suite("README's sample job")
struct ReadmeSampleTests {
    static let marker = "<!-- readme-sample"
    /// Where `make demo` starts the fixture server, and so the sample's `baseURL`.
    static let demoBaseURL = "http://127.0.0.1:18765"

    static func readme() throws -> String {
        try String(
            contentsOf: PackagePaths.root.appendingPathComponent("README.md"), encoding: .utf8)
    }

    /// The fenced blocks after the marker, in order: each one's info string (`json`, `sh`, or
    /// empty) and its lines.
    static func blocks() throws -> [(info: String, text: String)] {
        let text = try readme()
        let start = try #require(text.range(of: Self.marker), "README has no \(Self.marker)")
        let lines = text[start.upperBound...].split(
            separator: "\n", omittingEmptySubsequences: false)
        var blocks: [(info: String, text: String)] = []
        var open: (info: String, lines: [Substring])?
        for line in lines {
            if let block = open {
                if line == "```" {
                    blocks.append((block.info, block.lines.joined(separator: "\n")))
                    open = nil
                } else {
                    open?.lines.append(line)
                }
            } else if line.hasPrefix("```") {
                open = (String(line.dropFirst(3)), [])
            }
        }
        return blocks
    }

    /// README's job file: the first ```` ```json ```` block after the marker.
    static func sampleJob() throws -> String {
        try #require(try blocks().first { $0.info == "json" }, "no json block").text
    }

    /// The summary line README shows for the sample (the first line that starts `courier: `
    /// in a plain block after the job), as a pattern: each number stands for any number, and
    /// the log path for any path.
    static func summaryPattern() throws -> Regex<AnyRegexOutput> {
        let blocks = try blocks()
        let job = try #require(blocks.firstIndex { $0.info == "json" }, "no json block")
        let output = try #require(
            blocks[(job + 1)...].first { $0.info.isEmpty }, "no output block after the job")
        let line = try #require(
            output.text.split(separator: "\n").first { $0.hasPrefix("courier: ") },
            "README shows no summary line after its sample")
        let logStart = try #require(line.range(of: "; log: "), "\(line)")
        let shape = NSRegularExpression.escapedPattern(for: String(line[..<logStart.lowerBound]))
            .replacingOccurrences(
                of: #"[0-9]+(\\\.[0-9]+)?"#, with: #"[0-9]+(\\.[0-9]+)?"#,
                options: .regularExpression)
        return try Regex("^" + shape + "; log: (\\S+)$")
    }

    @Test("README's job is jobs/sample.json, against make demo's server")
    func sampleIsTheJobsFile() throws {
        let shown = try JSONSerialization.jsonObject(with: Data(try Self.sampleJob().utf8))
        let file = try JSONSerialization.jsonObject(
            with: Data(contentsOf: PackagePaths.root.appendingPathComponent("jobs/sample.json")))
        #expect((shown as? NSDictionary) == (file as? NSDictionary))
        #expect((shown as? [String: Any])?["baseURL"] as? String == Self.demoBaseURL)
    }

    @Test("courier run jobs/sample.json exits 0 with the summary line README shows")
    func sampleRuns() async throws {
        let space = try JobWorkspace()
        defer { space.remove() }
        let job = try Self.sampleJob()
        #expect(job.contains(Self.demoBaseURL))
        let jobs = space.folder.appendingPathComponent("jobs")
        try FileManager.default.createDirectory(at: jobs, withIntermediateDirectories: true)
        let local = job.replacingOccurrences(
            of: Self.demoBaseURL, with: space.server.baseURL.absoluteString)
        try local.write(
            to: jobs.appendingPathComponent("sample.json"), atomically: true, encoding: .utf8)

        // The command README shows, in a folder of its own (jobs/logs/ and jobs/out/ go there).
        let result = try await CourierBinary.run(
            ["run", "jobs/sample.json"], directory: space.folder)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let summary = try #require(
            result.stdout.split(separator: "\n").first { $0.hasPrefix("courier: ") },
            "\(result.stdout)\(result.stderr)")
        let pattern = try Self.summaryPattern()
        let match = try #require(
            try pattern.wholeMatch(in: String(summary)), "\(summary) is not the shape of README's")
        // The log it names is there.
        let log = try #require(match.output.last?.substring.map(String.init))
        #expect(
            FileManager.default.fileExists(
                atPath: space.folder.appendingPathComponent(log).path), "\(log)")
    }
}
