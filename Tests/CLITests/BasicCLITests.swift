import Courier
@testable import CourierJobs
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
        // "libcurl features: HAS…; without: LACKS…": only the words before "; without:" are
        // features the library has.
        let parts = features.dropFirst("libcurl features: ".count).split(
            separator: "; without: ", omittingEmptySubsequences: false)
        let has = Set((parts.first ?? "").split(separator: " ").map(String.init))
        let lacks = Set(parts.dropFirst().joined().split(separator: " ").map(String.init))
        #expect(parts.count <= 2, "\(features)")
        for feature in ["HTTP2", "brotli", "zstd", "libz", "SSL"] {
            #expect(has.contains(feature), "\(features) does not list \(feature) as present")
            #expect(!lacks.contains(feature), "\(features) lists \(feature) as missing")
        }
    }

    @Test func helpListsTheCommands() async throws {
        let result = try await CourierBinary.run(["--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("courier run JOB.json"))
        #expect(result.stdout.contains("courier validate"))
        // `--help COMMAND` is `help COMMAND`; anything after `--version` is refused (trial
        // EEE: `--version --bogus` exited 0).
        let run = try await CourierBinary.run(["--help", "run"])
        #expect(run.status == 0 && run.stdout.hasPrefix("Usage: courier run"), "\(run.stdout)")
        let bogus = try await CourierBinary.run(["--version", "--bogus"])
        #expect(bogus.status == 2 && bogus.stdout.isEmpty, "\(bogus.stdout)")
        #expect(bogus.stderr.contains("--version takes no arguments, got '--bogus'"))
    }

    @Test(
        "courier help CMD prints what courier CMD --help does",
        arguments: CommandHelp.commands.map(\.name))
    func helpCommandPrintsTheCommandsHelp(command: String) async throws {
        let help = try await CourierBinary.run(["help", command])
        let flag = try await CourierBinary.run([command, "--help"])
        #expect(help.status == 0)
        #expect(flag.status == 0)
        #expect(help.stdout.hasPrefix("Usage: courier \(command)"))
        #expect(help.stdout == flag.stdout)
        #expect(help.stderr.isEmpty)
    }

    @Test("the overview lists every command of the table, and nothing else stands for one")
    func overviewListsEveryCommand() async throws {
        let result = try await CourierBinary.run(["--help"])
        #expect(result.status == 0)
        let listed = Set(
            result.stdout.split(separator: "\n").compactMap { line -> String? in
                let words = line.split(separator: " ")
                return words.first == "courier" && words.count > 1 ? String(words[1]) : nil
            })
        #expect(listed == Set(CommandHelp.commands.map(\.name)), "\(result.stdout)")
        // The HAR commands, left out of help, completions and the man page before the table.
        #expect(listed.isSuperset(of: ["export", "import"]))
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
        let typo = try await CourierBinary.run(["help", "replya"])
        #expect(typo.status == 2)
        #expect(
            typo.stderr.contains("no command 'replya'; did you mean 'replay'?"), "\(typo.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test func unknownCommandIsAUsageError() async throws {
        let result = try await CourierBinary.run(["frobnicate"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("unknown command 'frobnicate'"))
        #expect(!result.stderr.contains("did you mean"))
        #expect(result.stdout.isEmpty)
        // A command a letter or two off is named (trial L: the command line guessed nothing).
        let typo = try await CourierBinary.run(["replya", "logs/"])
        #expect(typo.status == 2)
        #expect(
            typo.stderr.contains("unknown command 'replya'; did you mean 'replay'?"),
            "\(typo.stderr)")
    }

    @Test func anOptionGivenTwiceOrMisspeltIsSaid() async throws {
        let twice = try await CourierBinary.run([
            "run", "job.json", "--concurrency", "4", "--concurrency", "8",
        ])
        #expect(twice.status == 2)
        #expect(
            twice.stderr.contains("run: --concurrency is given twice; give it once"),
            "\(twice.stderr)")
        let typo = try await CourierBinary.run(["run", "job.json", "--dry-rn"])
        #expect(typo.status == 2)
        #expect(typo.stderr.contains("did you mean '--dry-run'?"), "\(typo.stderr)")
        // `--resume` takes an optional log: given twice, or given a folder, it is said so
        // (trial P: "unexpected argument").
        for arguments in [
            ["run", "job.json", "--resume", "--resume"],
            ["run", "job.json", "--resume", "--resume=a.jsonl"],
        ] {
            let resumed = try await CourierBinary.run(arguments)
            #expect(resumed.status == 2)
            #expect(
                resumed.stderr.contains("run: --resume is given twice; give it once"),
                "\(arguments): \(resumed.stderr)")
        }
        let folder = FileManager.default.temporaryDirectory.path
        let atFolder = try await CourierBinary.run(["run", "--resume", folder, "job.json"])
        #expect(atFolder.status == 2)
        #expect(
            atFolder.stderr.contains("--resume takes a log file (.jsonl)")
                && atFolder.stderr.contains("\(folder) is a folder"), "\(atFolder.stderr)")
        // The job after `--resume` as well as before it: said so, not "unexpected".
        let twiceJob = try await CourierBinary.run(["run", "job.json", "--resume", "job.json"])
        #expect(twiceJob.status == 2)
        #expect(
            twiceJob.stderr.contains("job.json is a job file, and the job is given already"),
            "\(twiceJob.stderr)")
    }
}
