import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The `courier` command: dispatches to one command per verb and returns the exit status.
/// Kept here rather than in the executable so that tests reach every path.
package enum CommandLineInterface {
    /// Exit statuses, as documented in docs/cli.md and docs/scheduling.md.
    enum ExitCode {
        static let success: Int32 = 0
        static let taskFailed: Int32 = 1
        static let usage: Int32 = 2
        static let locked: Int32 = 3
        // 4 (every task ok, a data check failed) is ``RunSummary/exitCode``'s.
        // 130 and 143 (SIGINT, SIGTERM) come from the signal that stopped the run
        // (`RunStop.Cause.exitSignal`), not from a constant here.
    }

    /// What courier is, in a line: the overview's first and the man page's NAME.
    static let tagline = "run declarative HTTP jobs and call APIs reliably"

    static let exitCodes = """
        Exit codes: 0 all tasks met expectations, 1 some task failed, 2 usage or configuration
        error (nothing was sent), 3 another run of the job holds its lock, 4 every task ok but
        a data check (the job's "checks") failed, 130/143 interrupted (by SIGINT/SIGTERM, 143
        also at the run's deadline).
        """

    static let usage =
        "courier: \(tagline)\n\nUsage:\n"
        + CommandHelp.synopsis.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n")
        + "\n\n\(exitCodes)"

    /// Raises the soft limit of open files to the hard one. Each task in flight holds a
    /// socket and, while it saves, a file or two: at `concurrency` 400 the usual soft limit of
    /// 1024 ran out ("Too many open files", failed tasks), while the hard limit (often
    /// 524288 under systemd) allowed far more. Servers raise it the same way at start.
    static func raiseOpenFileLimit() {
        #if os(Linux)
            var limit = rlimit()
            let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
            guard getrlimit(resource, &limit) == 0, limit.rlim_cur < limit.rlim_max else {
                return
            }
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(resource, &limit)
        #endif
    }

    /// Runs the command line (without the program name) and returns the exit status.
    package static func run(_ arguments: [String]) async -> Int32 {
        // A reader that goes away (`courier … | head`) must not kill a run before it writes
        // its log's last line: writes to a closed pipe fail with EPIPE instead.
        signal(SIGPIPE, SIG_IGN)
        // Likewise a file size limit (`ulimit -f`): a write past it fails with EFBIG, as on a
        // full disk, and the run says so, instead of being killed in the middle of a line.
        signal(SIGXFSZ, SIG_IGN)
        raiseOpenFileLimit()
        guard let verb = arguments.first else {
            Console.error(usage)
            return ExitCode.usage
        }
        switch verb {
        case "--help", "-h", "--version":
            // `--help COMMAND` is `help COMMAND`; nothing else after them (`--version --bogus`
            // said the version, exit 0: trial EEE).
            if verb != "--version", arguments.count == 2, let help = CommandHelp.entry("help") {
                return await help.run(Array(arguments.dropFirst()))
            }
            if arguments.count > 1 {
                Console.error(
                    "courier: \(verb) takes \(verb == "--version" ? "no arguments" : "at most a command"), got '\(arguments[1])'; see 'courier --help'"
                )
                return ExitCode.usage
            }
            Console.output(verb == "--version" ? VersionText.lines.joined(separator: "\n") : usage)
            return ExitCode.success
        case let name:
            if let entry = CommandHelp.entry(name) {
                return await entry.run(Array(arguments.dropFirst()))
            }
            let suggestion = NodeReader.closest(
                to: verb, in: CommandHelp.commands.map(\.name))
            Console.error(
                "courier: unknown command '\(verb)'"
                    + (suggestion.map { "; did you mean '\($0)'?" } ?? "")
                    + "; see 'courier --help'")
            return ExitCode.usage
        }
    }
}
