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

    @Test func unknownCommandIsAUsageError() async throws {
        let result = try await CourierBinary.run(["frobnicate"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("unknown command 'frobnicate'"))
        #expect(result.stdout.isEmpty)
    }
}
