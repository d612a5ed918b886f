import Foundation
import Testing

@testable import CourierJobs

/// `save` paths stay inside `outputDir`, by text and through symbolic links.
@Suite("OutputPath")
struct OutputPathTests {
    @Test(arguments: ["a.json", "deep/er/b.json", "./c.json", "d/./e.json", "dots..json"])
    func acceptedPaths(path: String) {
        #expect(OutputPath.problem(with: path) == nil)
    }

    @Test(arguments: ["", "/etc/passwd", "~/x", "../x", "a/../../x", "a/..", "folder/", "a\0b"])
    func refusedPaths(path: String) {
        #expect(OutputPath.problem(with: path) != nil)
    }

    @Test func resolveStaysInsideAndRefusesLinksOut() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "outpath-\(UUID().uuidString)")
        let out = root.appendingPathComponent("out")
        let outside = root.appendingPathComponent("outside")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createSymbolicLink(
            at: out.appendingPathComponent("link"), withDestinationURL: outside)
        #expect(OutputPath.resolve("a/b.json", in: out)?.path == out.path + "/a/b.json")
        #expect(OutputPath.resolve("link/x.json", in: out) == nil)
        #expect(OutputPath.resolve("../outside/x.json", in: out) == nil)
    }
}
