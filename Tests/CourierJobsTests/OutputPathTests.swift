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

    @Test(
        "a run's output folder resolves as OutputPath does, and a folder it knew, swapped for a link out, is refused"
    )
    func outputFolderRemembersOnlyWhatStaysInside() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "outfolder-\(UUID().uuidString)")
        let out = root.appendingPathComponent("out")
        let outside = root.appendingPathComponent("outside")
        let saves = out.appendingPathComponent("saves")
        for folder in [saves, outside] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = OutputFolder(out)
        for path in ["saves/1.json", "saves/2.json", "top.json", "./saves/3.json", "new/4.json"] {
            #expect(folder.resolve(path) == OutputPath.resolve(path, in: out), "\(path)")
        }
        #expect(folder.resolve("saves/1.json")?.path == saves.path + "/1.json")
        #expect(folder.resolve("../outside/x.json") == nil)
        // The folder it has seen, swapped for a link that leads out of the output folder.
        try FileManager.default.moveItem(at: saves, to: root.appendingPathComponent("moved"))
        try FileManager.default.createSymbolicLink(at: saves, withDestinationURL: outside)
        #expect(folder.resolve("saves/5.json") == nil)
        #expect(OutputPath.resolve("saves/5.json", in: out) == nil)
    }
}
