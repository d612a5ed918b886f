import Courier
import CourierTestSupport
import Testing

@Suite("courier basics")
struct BasicCLITests {
    @Test func versionPrintsTheLibraryVersion() async throws {
        let result = try await CourierBinary.run(["--version"])
        #expect(result.status == 0)
        #expect(result.stdout == "courier \(CourierVersion.current)\n")
    }

    @Test func helpListsTheCommands() async throws {
        let result = try await CourierBinary.run(["--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("courier run JOB.json"))
        #expect(result.stdout.contains("courier validate"))
    }

    @Test(
        "courier help CMD prints what courier CMD --help does",
        arguments: ["run", "validate", "replay", "report", "bench", "help"])
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
