@_spi(Fuzzing) @testable import CourierCurl
import Courier
@testable import CourierJobs
import Foundation
import Testing

/// Every committed fuzz input (`Tests/Fuzz/<target>/`: the seeds, and each crash a fuzzer
/// found, kept after its fix) runs through its target in every `make test`, so a fixed finding
/// stays fixed without a fuzzer build.
@Suite("fuzz corpus replay")
struct FuzzCorpusTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")

    static func inputs(_ target: String) throws -> [Data] {
        let folder = root.appendingPathComponent(target)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        return try names.map { try Data(contentsOf: folder.appendingPathComponent($0)) }
    }

    @Test(
        "each target has a corpus, and every input runs without a finding",
        arguments: ["jobfile", "template", "logline", "headers", "events"])
    func replay(target: String) throws {
        let inputs = try Self.inputs(target)
        #expect(inputs.count >= 2, "a seed corpus for \(target)")
        for input in inputs {
            switch target {
            case "jobfile": JobsFuzzing.jobFile(input)
            case "template": JobsFuzzing.template(input)
            case "logline": JobsFuzzing.logLine(input)
            case "events": StreamFuzzing.events(input)
            default: input.withUnsafeBytes { CurlFuzzing.headerLines($0) }
            }
        }
    }

    @Test("a status line with a long run of digits is read as its first three")
    func statusDigits() {
        let line = Data(("HTTP/1.1 " + String(repeating: "2", count: 40) + " OK\r\n").utf8)
        var head = ResponseHead()
        // Trapped on overflow before the fix (found by `make fuzz`).
        line.withUnsafeBytes { head.receive($0) }
        #expect(head.status == 222, "\(head.status) \(head.headers) \(line.count)")
    }
}
