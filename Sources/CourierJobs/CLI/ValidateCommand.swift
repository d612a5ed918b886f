import Courier
import Foundation

/// `courier validate JOB.json... [--json]`
enum ValidateCommand {
    static let usage = """
        Usage: courier validate JOB.json... [--json]
        Checks each job file (keys, types, templates, environment variables, foreach sources,
        save paths, unique task ids) without sending anything; - reads one from stdin (its
        relative paths taken from the current directory). Exit 0 when all are valid, 2 if not.
          --json         one JSON object on stdout instead of the lines: {"ok": true|false,
                         "tasks": N (the valid files' tasks), "files": [{"file", "ok",
                         "tasks"}], "errors": [{"file", "path", "message", "line", "column"}],
                         "warnings": [the same, for what is sent as written but likely
                         meant otherwise]}
        """

    /// What one file came to: its task count, or its errors.
    struct Outcome {
        let file: String
        let tasks: Int?
        let fanOuts: Int
        let errors: [JobFileError]
        var notes: [JobFileError] = []
    }

    static func run(_ arguments: [String]) -> Int32 {
        var parser = ArgumentParser(arguments, command: "validate")
        let json: Bool
        let files: [String]
        do throws(UsageError) {
            if parser.flag("--help") {
                Console.output(usage)
                return CommandLineInterface.ExitCode.success
            }
            json = parser.flag("--json")
            files = parser.positionals()
            try parser.finish()
            guard !files.isEmpty else {
                throw UsageError("validate: missing JOB.json; see 'courier validate --help'")
            }
            guard files.filter({ $0 == "-" }).count <= 1 else {
                throw UsageError("validate: - (stdin) can be read once")
            }
        } catch {
            Console.error("courier \(error.message)")
            return CommandLineInterface.ExitCode.usage
        }
        let outcomes = files.map(check)
        if json {
            Console.output(JSONWriter.string(value(outcomes)))
        } else {
            for outcome in outcomes {
                if let total = outcome.tasks {
                    let more =
                        outcome.fanOuts == 0
                        ? ""
                        : ", and \(outcome.fanOuts) fanning out over captured values as the run goes"
                    Console.output(
                        "\(outcome.file): ok (\(total) task\(total == 1 ? "" : "s")\(more))")
                }
                for note in outcome.notes { Console.error("courier: warning: \(note)") }
                for error in outcome.errors { Console.error("courier: \(error)") }
            }
        }
        return outcomes.allSatisfy { $0.errors.isEmpty }
            ? CommandLineInterface.ExitCode.success : CommandLineInterface.ExitCode.usage
    }

    static func check(_ argument: String) -> Outcome {
        let file = argument == "-" ? JobDecoder.standardInput.relativePath : argument
        do {
            let job = try JobDecoder.load(argument: argument)
            let total = try JobValidator.validate(job)
            let fanOuts = job.tasks.filter { $0.captureSource != nil }.count
            return Outcome(
                file: file, tasks: total, fanOuts: fanOuts, errors: [], notes: job.notes)
        } catch {
            return Outcome(file: file, tasks: nil, fanOuts: 0, errors: error.errors)
        }
    }

    /// `--json`'s object (documented in the usage above and in docs/cli.md).
    static func value(_ outcomes: [Outcome]) -> JSONWriter.Value {
        func entry(_ error: JobFileError) -> JSONWriter.Value {
            .object([
                ("file", .string(error.file)), ("path", .string(error.path)),
                ("message", .string(error.message)),
                ("line", error.line.map { .int($0) } ?? .null),
                ("column", error.column.map { .int($0) } ?? .null),
            ])
        }
        let errors = outcomes.flatMap(\.errors).map(entry)
        let files = outcomes.map { outcome -> JSONWriter.Value in
            .object([
                ("file", .string(outcome.file)), ("ok", .bool(outcome.errors.isEmpty)),
                ("tasks", outcome.tasks.map { .int($0) } ?? .null),
            ])
        }
        return .object([
            ("ok", .bool(errors.isEmpty)),
            ("tasks", .int(outcomes.compactMap(\.tasks).reduce(0, +))),
            ("files", .array(files)), ("errors", .array(errors)),
            ("warnings", .array(outcomes.flatMap(\.notes).map(entry))),
        ])
    }
}
