/// Every command's help text, in one table: `courier help CMD` and `courier CMD --help` print
/// it, and the completion scripts and the man page are made from it, so none of them can tell
/// a different story.
enum CommandHelp {
    /// One command: its name, a line for the man page, and its `--help` text.
    struct Entry: Sendable {
        let name: String
        let summary: String
        let usage: String
    }

    /// The commands, in the order the overview lists them.
    static let commands: [Entry] = [
        Entry(name: "run", summary: "run a job file's tasks", usage: RunCommand.usage),
        Entry(
            name: "validate", summary: "check job files without sending anything",
            usage: ValidateCommand.usage),
        Entry(name: "replay", summary: "send a run's tasks again", usage: ReplayCommand.usage),
        Entry(
            name: "report", summary: "summarise runs from their logs", usage: ReportCommand.usage),
        Entry(name: "bench", summary: "measure the transports", usage: BenchCommand.usage),
        Entry(name: "help", summary: "print a command's help", usage: helpUsage),
    ]

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
            let known = commands.map(\.name).joined(separator: ", ")
            Console.error(
                arguments.count == 1
                    ? "courier help: no command '\(name)'; the commands: \(known)"
                    : "courier help: expects one command, got \(arguments.count)")
            return CommandLineInterface.ExitCode.usage
        }
        Console.output(entry.usage)
        return CommandLineInterface.ExitCode.success
    }
}
