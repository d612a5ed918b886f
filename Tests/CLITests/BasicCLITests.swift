import Courier
import CourierTestSupport
import Foundation
import Testing

@Suite("courier basics")
struct BasicCLITests {
    @Test func versionPrintsTheLibraryVersionCommitAndLibcurl() async throws {
        let result = try await CourierBinary.run(["--version"])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "courier \(CourierVersion.current)")
        // `make` embeds the commit; the `swift build` the tests run says it does not know.
        let commit = try #require(lines.first { $0.hasPrefix("commit ") })
        #expect(commit.count > "commit ".count)
        // The version pkg-config has for the libcurl this was built against, when it is there.
        let pkgConfig = URL(fileURLWithPath: "/usr/bin/pkg-config")
        let library = try #require(lines.first { $0.hasPrefix("libcurl ") })
        if FileManager.default.isExecutableFile(atPath: pkgConfig.path) {
            let modversion = try await CourierBinary.run(
                ["--modversion", "libcurl"], executable: pkgConfig)
            let version = modversion.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(
                library.hasPrefix("libcurl \(version) ("), "\(library) vs pkg-config \(version)")
        }
        let features = try #require(lines.first { $0.hasPrefix("libcurl features: ") })
        let words = Set(features.split(whereSeparator: { " :;".contains($0) }).map(String.init))
        for feature in ["HTTP2", "brotli", "zstd", "libz", "SSL"] {
            #expect(words.contains(feature), "\(features) says nothing of \(feature)")
        }
    }

    @Test func helpListsTheCommands() async throws {
        let result = try await CourierBinary.run(["--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("courier run JOB.json"))
        #expect(result.stdout.contains("courier validate"))
    }

    @Test(
        "courier help CMD prints what courier CMD --help does",
        arguments: ["run", "validate", "replay", "report", "bench", "help", "completions", "man"])
    func helpCommandPrintsTheCommandsHelp(command: String) async throws {
        let help = try await CourierBinary.run(["help", command])
        let flag = try await CourierBinary.run([command, "--help"])
        #expect(help.status == 0)
        #expect(flag.status == 0)
        #expect(help.stdout.hasPrefix("Usage: courier \(command)"))
        #expect(help.stdout == flag.stdout)
        #expect(help.stderr.isEmpty)
    }

    @Test func helpWithoutACommandPrintsTheOverview() async throws {
        let help = try await CourierBinary.run(["help"])
        let flag = try await CourierBinary.run(["--help"])
        #expect(help.status == 0)
        #expect(help.stdout == flag.stdout)
    }

    @Test func helpForAnUnknownCommandIsAUsageError() async throws {
        let result = try await CourierBinary.run(["help", "frobnicate"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("no command 'frobnicate'"))
        #expect(result.stdout.isEmpty)
    }

    @Test func unknownCommandIsAUsageError() async throws {
        let result = try await CourierBinary.run(["frobnicate"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("unknown command 'frobnicate'"))
        #expect(result.stdout.isEmpty)
    }
}
