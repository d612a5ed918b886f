import Foundation

/// Every command, in one table: `courier` dispatches through it, the overview lists its
/// synopses, `courier help CMD` and `courier CMD --help` print its help, and the completion
/// scripts and the man page are made from it, so none of them can tell a different story or
/// leave a command out.
enum CommandHelp {
    /// One command: its name, a line for the man page, its line in the overview, its `--help`
    /// text, and what runs it.
    struct Entry: Sendable {
        let name: String
        let summary: String
        /// Its synopsis in `courier --help`, without the leading indent (one or more lines).
        let overview: String
        let usage: String
        /// Runs the command with the arguments after its name and returns the exit status.
        let run: @Sendable ([String]) async -> Int32

        /// The synopsis: the `Usage:` line and the lines that go on with it.
        var synopsis: [Substring] {
            let lines = usage.split(separator: "\n")
            guard let first = lines.first else { return [] }
            return [first]
                + lines.dropFirst().prefix { line in
                    line.hasPrefix(" ") && line.trimmingCharacters(in: .whitespaces).hasPrefix("[")
                }
        }

        /// What the first positional argument is (`JOB.json`, `LOG.jsonl...`).
        var operand: Argument {
            let words = synopsis.first?.split(separator: " ") ?? []
            // "Usage: courier NAME OPERAND …"
            guard words.count > 3, !words[3].hasPrefix("[") else {
                return name == "help" ? .choices(CommandHelp.commands.map(\.name)) : .none
            }
            return Argument(describing: words[3])
        }

        /// The options the help names, each with what its value is: those of the synopsis
        /// (`[--log-dir DIR]`, `[-n N | -d SECONDS]`), then flags named only in the text, and
        /// `--help`.
        var options: [(name: String, value: Argument?)] {
            var found: [(name: String, value: Argument?)] = []
            let tokens = synopsis.joined(separator: " ").split(separator: " ")
            for (index, token) in tokens.enumerated() {
                let word = token.drop { $0 == "[" }
                guard Self.isOption(word.prefix { $0 != "]" }) else { continue }
                let name = String(word.prefix { $0 != "]" })
                guard !found.contains(where: { $0.name == name }) else { continue }
                var value: Argument?
                if !word.hasSuffix("]"), index + 1 < tokens.count {
                    let next = tokens[index + 1]
                    if !next.hasPrefix("["), !next.hasPrefix("-"), next != "|" {
                        value = Argument(describing: next.prefix { $0 != "]" })
                    }
                }
                found.append((name, value))
            }
            let text = usage.split(whereSeparator: { " \n,()".contains($0) })
            for word in text where Self.isOption(word) {
                if !found.contains(where: { $0.name == word }) { found.append((String(word), nil)) }
            }
            if !found.contains(where: { $0.name == "--help" }) { found.append(("--help", nil)) }
            return found
        }

        static func isOption(_ word: some StringProtocol) -> Bool {
            guard word.hasPrefix("-"), word != "--" else { return false }
            let body = word.drop { $0 == "-" }
            guard let first = body.first, first.isLetter, word.count - body.count <= 2 else {
                return false
            }
            return body.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" }
        }
    }

    /// What an argument or an option's value is, as the help writes it: fixed words
    /// (`curl|urlsession`), a folder (`DIR`), files of a kind (`JOB.json`, `LOG.jsonl`, `FILE`),
    /// or anything (`N`, `GLOB`).
    enum Argument: Sendable, Equatable {
        case none
        case choices([String])
        case directory
        /// Files; with a suffix, those ending in it.
        case files(suffix: String?)
        case text

        init(describing text: some StringProtocol) {
            let alternatives = String(text).split(separator: "|").map(String.init)
            if alternatives.count > 1,
                alternatives.allSatisfy({ $0.allSatisfy { (c: Character) in c.isLowercase } })
            {
                self = .choices(alternatives)
            } else if text.contains("DIR") {
                self = .directory
            } else if text.contains(".jsonl") {
                self = .files(suffix: ".jsonl")
            } else if text.contains(".json") {
                self = .files(suffix: ".json")
            } else if text.contains("FILE") {
                self = .files(suffix: nil)
            } else {
                self = .text
            }
        }
    }

    /// The commands, in the order the overview lists them.
    static let commands: [Entry] = [
        Entry(
            name: "init", summary: "write a job file to start from",
            overview:
                "courier init JOB.json [--base-url URL]            (a job file to start from)",
            usage: InitCommand.usage, run: { InitCommand.run($0) }),
        Entry(
            name: "run", summary: "run the tasks of a job file",
            overview: """
                courier run JOB.json|- [--backend curl|urlsession] [--concurrency N] [--log-dir DIR]
                                       [--resume [LOG.jsonl...]] [--deadline DURATION] [--dry-run]
                                       [--json] [--quiet] [--no-progress] (see --help)
                """,
            usage: RunCommand.usage, run: { await RunCommand.run($0) }),
        Entry(
            name: "replay", summary: "send the tasks of a run again",
            overview: """
                courier replay LOG.jsonl... [--job JOB.json] [--all] [--status 5xx,429] [--dry-run]
                                            [--format plan|curl] [--pace asap|logged] (see --help)
                """,
            usage: ReplayCommand.usage, run: { await ReplayCommand.run($0) }),
        Entry(
            name: "report", summary: "summarise runs from their logs",
            overview: """
                courier report LOG.jsonl... [--last N] [--since WHEN] [--json] [--junit FILE]
                                            [--html FILE] [--otlp FILE] [--otlp-endpoint URL]
                """,
            usage: ReportCommand.usage, run: { await ReportCommand.run($0) }),
        Entry(
            name: "show", summary: "print one task's requests from run logs, readably",
            overview:
                "courier show LOG.jsonl... TASK                    (one task's attempts, readably)",
            usage: ShowCommand.usage, run: { ShowCommand.run($0) }),
        Entry(
            name: "export", summary: "write run logs as a HAR 1.2 archive",
            overview:
                "courier export --har LOG.jsonl... [-o FILE]       (run logs as a HAR 1.2 archive)",
            usage: ExportCommand.usage, run: { ExportCommand.run($0) }),
        Entry(
            name: "import", summary: "make a job file from a recorded HAR archive",
            overview: """
                courier import --har FILE.har [-o JOB.json] [--base-url URL]
                                                                  (a job file from a recorded HAR)
                """,
            usage: ImportCommand.usage, run: { ImportCommand.run($0) }),
        Entry(
            name: "validate", summary: "check job files without sending anything",
            overview: "courier validate JOB.json...|- [--json]",
            usage: ValidateCommand.usage, run: { ValidateCommand.run($0) }),
        Entry(
            name: "bench", summary: "measure the transports",
            overview: """
                courier bench URL|JOB.json [--backend curl,urlsession] [-n N | -d SECONDS] [-c N]
                                           [--rounds R] [--rate R] [--json] (see --help)
                """,
            usage: BenchCommand.usage, run: { await BenchCommand.run($0) }),
        Entry(
            name: "completions", summary: "print a shell completion script",
            overview: "courier completions bash|zsh|fish",
            usage: Completions.usage, run: { Completions.run($0) }),
        Entry(
            name: "man", summary: "print the manual page", overview: "courier man",
            usage: ManPage.usage, run: { ManPage.run($0) }),
        Entry(
            name: "help", summary: "print the help of a command",
            overview: "courier help [COMMAND] | --help | --version",
            usage: helpUsage, run: { CommandHelp.run($0) }),
    ]

    /// The overview's commands, one synopsis each (`courier help COMMAND` has the rest).
    static var synopsis: String {
        commands.map(\.overview).joined(separator: "\n")
    }

    static let helpUsage = """
        Usage: courier help [COMMAND]
        Prints COMMAND's help, as `courier COMMAND --help` does, or the overview without one.
        """

    /// The entry of `name`, if it is a command.
    static func entry(_ name: String) -> Entry? {
        commands.first { $0.name == name }
    }

    /// `courier help [COMMAND]`: the command's help on stdout, or a usage error for a name
    /// that is none.
    static func run(_ arguments: [String]) -> Int32 {
        if arguments == ["--help"] {
            Console.output(helpUsage)
            return CommandLineInterface.ExitCode.success
        }
        guard let name = arguments.first else {
            Console.output(CommandLineInterface.usage)
            return CommandLineInterface.ExitCode.success
        }
        guard arguments.count == 1, let entry = entry(name) else {
            let names = commands.map(\.name)
            // As `courier replya` does (trial P: `help replya` only listed them).
            let guess = NodeReader.closest(to: name, in: names).map { "did you mean '\($0)'? " }
            Console.error(
                arguments.count == 1
                    ? "courier help: no command '\(name)'; \(guess ?? "")the commands: \(names.joined(separator: ", "))"
                    : "courier help: expects one command, got \(arguments.count)")
            return CommandLineInterface.ExitCode.usage
        }
        Console.output(entry.usage)
        return CommandLineInterface.ExitCode.success
    }
}
