import Foundation
import Testing

@testable import CourierJobs

/// The small decisions behind the command line's conventions, without a binary.
@Suite("CLI conventions")
struct CLIConventionTests {
    @Test(
        "durations: units d, h, m, s, ms, combined; a bare number is seconds",
        arguments: [
            ("90s", 90.0), ("30m", 1800), ("2h", 7200), ("1h30m", 5400), ("1.5h", 5400),
            ("250ms", 0.25), ("45", 45), ("2m30s", 150), ("1d", 86_400), ("1d12h", 129_600),
        ])
    func duration(text: String, seconds: Double) {
        #expect(ArgumentParser.seconds(text) == seconds)
    }

    @Test(arguments: ["", "h", "10x", "1h-", "5 s", "1..5s", "-"])
    func notADuration(text: String) {
        #expect(ArgumentParser.seconds(text) == nil)
    }

    /// A trial's `courier run --bogus` was told "missing JOB.json".
    @Test func anUnknownOptionIsNamedBeforeAMissingOperand() throws {
        var parser = ArgumentParser(["--bogus"], command: "run")
        #expect(throws: UsageError.self) { try parser.positional("JOB.json") }
        do {
            _ = try parser.positional("JOB.json")
        } catch {
            #expect(error.message.contains("unexpected argument '--bogus'"), "\(error.message)")
        }
        var empty = ArgumentParser([], command: "run")
        do {
            _ = try empty.positional("JOB.json")
        } catch {
            #expect(error.message.contains("missing JOB.json"), "\(error.message)")
        }
    }

    /// What a left-over argument is (trial L: an option given twice said "unexpected argument",
    /// and a misspelt one named no option).
    @Test(
        "a left-over argument says what it is",
        arguments: [
            (
                ["--concurrency", "4", "--concurrency", "8"],
                "run: --concurrency is given twice; give it once"
            ),
            (
                ["--concurrency=4", "--concurrency=8"],
                "run: --concurrency is given twice; give it once"
            ),
            (["--dry-run", "--dry-run"], "run: --dry-run is given twice; give it once"),
            (["--dry-run=yes"], "run: --dry-run takes no value, got '--dry-run=yes'"),
            (
                ["--concurency", "4"],
                "run: unexpected argument '--concurency'; did you mean '--concurrency'?"
            ),
            (["--bogus"], "run: unexpected argument '--bogus'; see 'courier run --help'"),
            (["-x"], "run: unexpected argument '-x'; see 'courier run --help'"),
            (["extra"], "run: unexpected argument 'extra'; see 'courier run --help'"),
        ])
    func leftOver(arguments: [String], message: String) throws {
        var parser = ArgumentParser(arguments, command: "run")
        _ = try parser.option("--concurrency")
        _ = parser.flag("--dry-run")
        _ = try parser.option("-n")
        let error = #expect(throws: UsageError.self) { try parser.finish() }
        #expect(error?.message.hasPrefix(message) == true, "\(error?.message ?? "")")
    }

    /// A resume stopped before its captures fed every task: the count is a floor (trial P's
    /// summary said "4 tasks not done" where 32 were).
    @Test func aStoppedRunsUnlistedTasksMakeTheCountAFloor() throws {
        let job = try ExpansionTests.load(
            #"{"version": 1, "name": "n", "baseURL": "http://127.0.0.1:1", "tasks": [{"id": "a", "path": "/"}]}"#
        )
        let log = URL(fileURLWithPath: "/tmp/logs/n/x.jsonl")
        let floor = RunCommand.historyNote(
            missing: 4, held: 0, partial: true, unlisted: true, job: job, log: log)
        #expect(
            floor.hasPrefix(
                "; the job's history: 4 tasks not done, and more that no run has listed yet (those fed by captures) (`courier run "
            ), "\(floor)")
        let partial = RunCommand.historyNote(missing: 0, held: 0, partial: true, job: job, log: log)
        #expect(partial.contains("no whole run of the job yet"), "\(partial)")
    }

    @Test func drawingNeedsATerminalThatCanAndNoNO_COLOR() {
        #expect(Console.allowsDrawing(isTerminal: true, noColor: nil, term: "xterm"))
        #expect(Console.allowsDrawing(isTerminal: true, noColor: "", term: nil))
        #expect(!Console.allowsDrawing(isTerminal: false, noColor: nil, term: "xterm"))
        #expect(!Console.allowsDrawing(isTerminal: true, noColor: "1", term: "xterm"))
        #expect(!Console.allowsDrawing(isTerminal: true, noColor: "false", term: "xterm"))
        #expect(!Console.allowsDrawing(isTerminal: true, noColor: nil, term: "dumb"))
    }
}

/// Where `run --json` puts a refusal's object: stderr only when the log is on stdout. A job
/// read from stdin (`-` as the job, with a log folder) once sent it to stderr too.
@Suite("run --json refusal's stream")
struct RefusalStreamTests {
    @Test func onlyTheLogOnStdoutMovesIt() {
        #expect(RunCommand.logsToStandardOutput(["job.json", "--log-dir", "-", "--json"]))
        #expect(RunCommand.logsToStandardOutput(["job.json", "--log-dir=-", "--json"]))
        #expect(!RunCommand.logsToStandardOutput(["-", "--log-dir", "logs", "--json"]))
        #expect(!RunCommand.logsToStandardOutput(["job.json", "--json"]))
    }
}
