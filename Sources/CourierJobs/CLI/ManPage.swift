import Courier

/// `courier man`: the manual page, courier.1, in roff, made from the same text as `--help`
/// (the overview and each command's help, ``CommandHelp``), so that the two never differ.
/// `make man` writes it to .build/man/courier.1 and `make install` installs it.
enum ManPage {
    static let usage = """
        Usage: courier man
        Prints the manual page (roff) made from the commands' help: man -l <(courier man)
        """

    static func run(_ arguments: [String]) -> Int32 {
        if arguments == ["--help"] {
            Console.output(usage)
            return CommandLineInterface.ExitCode.success
        }
        guard arguments.isEmpty else {
            Console.error("courier man: takes no arguments; see 'courier man --help'")
            return CommandLineInterface.ExitCode.usage
        }
        Console.output(roff())
        return CommandLineInterface.ExitCode.success
    }

    static func roff() -> String {
        var lines = [
            #".TH COURIER 1 "" "courier \#(CourierVersion.current)" "User Commands""#,
            ".SH NAME",
            "courier \\- " + escaped(CommandLineInterface.tagline),
            ".SH SYNOPSIS",
        ]
        lines += verbatim(CommandHelp.synopsis)
        lines += [
            ".SH DESCRIPTION",
            escaped(
                "courier runs the tasks of a declarative JSON job file (cron-style API syncs): it "
                    + "validates the file, sends its requests with retries, rate limits and "
                    + "redirects, saves responses, and writes one JSON line per request attempt "
                    + "to a log, which report, replay and run --resume read."),
            ".SH COMMANDS",
        ]
        for entry in CommandHelp.commands {
            lines += [".SS " + escaped(entry.name), escaped(entry.summary) + "."]
            lines += verbatim(entry.usage)
        }
        lines += [".SH EXIT STATUS"]
        lines += CommandLineInterface.exitCodes.split(separator: "\n").map { escaped(String($0)) }
        lines += [
            ".SH ENVIRONMENT",
            ".TP", ".B NO_COLOR",
            escaped("Set to anything but empty: no progress line, no control sequence at all."),
            ".TP", ".B TERM",
            escaped("dumb: as NO_COLOR."),
            ".TP", ".B JOB_COMPLETION_INDEX, JOB_COMPLETIONS",
            escaped(
                "The shard of courier run when --shard is not given (a Kubernetes Indexed Job)."),
            ".TP", ".B COURIER_HOSTS_DIR, XDG_STATE_HOME",
            escaped(
                "Where the host budgets of \"hostThrottle\": \"shared\" are kept: COURIER_HOSTS_DIR, else $XDG_STATE_HOME/courier/hosts, else ~/.local/state/courier/hosts (an empty value counts as unset)."
            ),
            ".TP", ".B TRACEPARENT, TRACESTATE",
            escaped(
                "W3C trace context of the caller: the run's trace is a child of its span, and with --trace (or \"trace\": true) each request carries the tracestate."
            ),
            ".TP",
            ".B OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_TRACES_HEADERS, OTEL_SERVICE_NAME, OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER",
            escaped(
                "As in other OpenTelemetry tools: where courier run and replay export the run's trace when it ends, with which headers (secrets, never written) and service name; courier report uses the headers and service name too."
            ),
            ".TP", ".B CREDENTIALS_DIRECTORY",
            escaped(
                "systemd's credentials folder, read by ${file:$CREDENTIALS_DIRECTORY/NAME} in a job file."
            ),
            ".SH SEE ALSO",
            escaped(
                "curl(1); docs/job-file.md, docs/log-format.md, docs/metrics.md, docs/cli.md and docs/report.md in the source tree (the Debian package does not hold them)."
            ),
        ]
        return lines.joined(separator: "\n")
    }

    /// Text set as it is (no filling), for help text laid out in columns.
    private static func verbatim(_ text: String) -> [String] {
        [".PP", ".nf"]
            + text.split(separator: "\n", omittingEmptySubsequences: false).map {
                escaped(String($0))
            } + [".fi"]
    }

    /// A line of text for roff: backslashes and hyphens escaped, characters beyond ASCII as
    /// `\[uXXXX]` (groff reads a file as Latin-1 unless told), and a leading `.` or `'`
    /// (which would make it a request) guarded.
    static func escaped(_ line: String) -> String {
        let text = ScalarEscaping.escape(line) { scalar in
            switch scalar {
            case "\\": return .replace("\\e")
            case "-": return .replace("\\-")
            case _ where scalar.isASCII: return .keep
            default:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                return .replace(
                    "\\[u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]")
            }
        }
        return text.hasPrefix(".") || text.hasPrefix("'") ? "\\&" + text : text
    }
}
