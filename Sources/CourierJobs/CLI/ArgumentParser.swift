import Foundation

/// A small parser for `courier`'s arguments: options take their value from the next argument,
/// flags stand alone, everything else is positional. Unknown options are usage errors.
struct ArgumentParser {
    private var remaining: [String]
    private let command: String
    /// Every option and flag the command asked for, and those it found: what a left-over
    /// argument is told against (given twice, or the known name it is closest to).
    private var asked: Set<String> = []
    private var taken: Set<String> = []

    init(_ arguments: [String], command: String) {
        self.remaining = arguments
        self.command = command
    }

    /// What a command's arguments came to: its options, or the status to exit with at once.
    enum Parsed<Options> {
        case options(Options)
        /// `--help` (its usage printed) or a usage error (said on standard error).
        case exit(Int32)
    }

    /// A command's options from its `arguments` by `parse`; its `usage` for `--help`, and a
    /// wrong argument said with the exit status for usage errors.
    static func parse<Options>(
        _ arguments: [String], command: String, usage: String,
        _ parse: (inout ArgumentParser) throws(UsageError) -> Options
    ) -> Parsed<Options> {
        var parser = ArgumentParser(arguments, command: command)
        if parser.flag("--help") {
            Console.output(usage)
            return .exit(CommandLineInterface.ExitCode.success)
        }
        do throws(UsageError) {
            return .options(try parse(&parser))
        } catch {
            Console.error("courier \(error.message)")
            return .exit(CommandLineInterface.ExitCode.usage)
        }
    }

    /// Removes a flag and says whether it was there.
    mutating func flag(_ name: String) -> Bool {
        asked.insert(name)
        guard let index = remaining.firstIndex(of: name) else { return false }
        remaining.remove(at: index)
        taken.insert(name)
        return true
    }

    /// Removes an option and its value (`--name value` or `--name=value`).
    mutating func option(_ name: String) throws(UsageError) -> String? {
        asked.insert(name)
        if let index = remaining.firstIndex(where: { $0.hasPrefix(name + "=") }) {
            let value = String(remaining.remove(at: index).dropFirst(name.count + 1))
            taken.insert(name)
            return value
        }
        guard let index = remaining.firstIndex(of: name) else { return nil }
        taken.insert(name)
        guard index + 1 < remaining.count else {
            throw UsageError("\(command): \(name) needs a value")
        }
        let value = remaining[index + 1]
        remaining.removeSubrange(index...index + 1)
        return value
    }

    /// Removes an option that names a file to write, checking that its folder is there: a
    /// file the user names goes where they said or nowhere (as a shell's `>` does), and a
    /// typo made folders up to the root (`--junit /no/dir/x.xml` created `/no/dir`).
    /// `-` (standard output) passes.
    mutating func outputFile(_ name: String) throws(UsageError) -> String? {
        guard let path = try option(name) else { return nil }
        guard path != "-" else { return path }
        guard !path.isEmpty, !path.hasSuffix("/") else {
            throw UsageError("\(command): \(name) expects a file's path, got '\(path)'")
        }
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder),
            isFolder.boolValue
        else {
            throw UsageError(
                "\(command): \(name) \(path): the folder \(folder.path) does not exist (courier makes no folder for a file you name); nothing was written"
            )
        }
        return path
    }

    /// Removes an integer option, checking its range.
    mutating func integer(
        _ name: String, default value: Int, range: ClosedRange<Int>
    ) throws(UsageError) -> Int {
        try optionalInteger(name, range: range) ?? value
    }

    /// Removes an integer option if present, checking its range.
    mutating func optionalInteger(_ name: String, range: ClosedRange<Int>) throws(UsageError)
        -> Int?
    {
        guard let text = try option(name) else { return nil }
        guard let number = Int(text), range.contains(number) else {
            throw UsageError(
                "\(command): \(name) expects a whole number from \(range.lowerBound) to \(range.upperBound), got '\(text)'"
            )
        }
        return number
    }

    /// Removes a duration option (`90s`, `30m`, `2h`, `1h30m`, `1.5h`, `1d`; a bare number is
    /// seconds), in seconds, if present.
    mutating func duration(_ name: String, allowZero: Bool = false) throws(UsageError)
        -> TimeInterval?
    {
        guard let text = try option(name) else { return nil }
        guard let seconds = Self.seconds(text), seconds > 0 || (allowZero && seconds == 0),
            seconds <= 31_536_000
        else {
            throw UsageError(
                "\(command): \(name) expects a duration such as \(allowZero ? "0s, " : "")90s, 30m, 2h or 1h30m (at most a year), got '\(text)'"
            )
        }
        return seconds
    }

    /// The seconds a duration names (``DurationText/seconds(_:)``).
    static func seconds(_ text: String) -> TimeInterval? { DurationText.seconds(text) }

    /// Removes the next positional argument (taken after the options: an option left over
    /// then is one the command does not know, said as such rather than as a missing `name`).
    mutating func positional(_ name: String) throws(UsageError) -> String {
        guard let index = remaining.firstIndex(where: { !$0.hasPrefix("-") || $0 == "-" }) else {
            try finish()
            throw UsageError("\(command): missing \(name); see 'courier \(command) --help'")
        }
        return remaining.remove(at: index)
    }

    /// Removes every occurrence of a repeatable option, in order.
    mutating func all(_ name: String) throws(UsageError) -> [String] {
        var values: [String] = []
        while let value = try option(name) { values.append(value) }
        return values
    }

    /// Removes the remaining positional arguments (`-` counts as one).
    mutating func positionals() -> [String] {
        let taken = remaining.filter { !$0.hasPrefix("-") || $0 == "-" }
        remaining.removeAll { !$0.hasPrefix("-") || $0 == "-" }
        return taken
    }

    /// Fails on anything not consumed, saying what it is: an option given twice, a flag given
    /// a value, an unknown option (with the known one it is closest to), or an argument too
    /// many.
    func finish() throws(UsageError) {
        guard let extra = remaining.first else { return }
        let help = "see 'courier \(command) --help'"
        guard extra.hasPrefix("-"), extra != "-" else {
            throw UsageError("\(command): unexpected argument '\(extra)'; \(help)")
        }
        let name = String(extra.prefix { $0 != "=" })
        if taken.contains(name) {
            throw UsageError("\(command): \(name) is given twice; give it once")
        }
        if asked.contains(name) {
            throw UsageError("\(command): \(name) takes no value, got '\(extra)'; \(help)")
        }
        // Two letters off a short name is any other short name: only longer ones get a guess.
        let suggestion = name.count > 3 ? NodeReader.closest(to: name, in: asked.sorted()) : nil
        throw UsageError(
            "\(command): unexpected argument '\(extra)'"
                + (suggestion.map { "; did you mean '\($0)'?" } ?? "") + "; \(help)")
    }
}
