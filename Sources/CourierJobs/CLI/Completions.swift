/// `courier completions bash|zsh|fish`: a completion script made from the commands' help
/// (``CommandHelp``): the commands, each command's options, the values the help lists for an
/// option (`--backend curl|urlsession`), folders for `DIR`, and job files or logs where the
/// help names them.
enum Completions {
    static let usage = """
        Usage: courier completions bash|zsh|fish
        Prints a completion script for the shell, made from the commands' help. Load it with
          bash: source <(courier completions bash)   (or save it as
                /usr/share/bash-completion/completions/courier)
          zsh:  courier completions zsh > "${fpath[1]}/_courier"
          fish: courier completions fish > ~/.config/fish/completions/courier.fish
        """

    static let shells = ["bash", "zsh", "fish"]

    static func run(_ arguments: [String]) -> Int32 {
        if arguments == ["--help"] {
            Console.output(usage)
            return CommandLineInterface.ExitCode.success
        }
        guard arguments.count == 1, let shell = arguments.first, shells.contains(shell) else {
            Console.error(
                "courier completions: expects one of bash, zsh or fish; see 'courier completions --help'"
            )
            return CommandLineInterface.ExitCode.usage
        }
        switch shell {
        case "bash": Console.output(bash())
        case "zsh": Console.output(zsh())
        default: Console.output(fish())
        }
        return CommandLineInterface.ExitCode.success
    }

    /// The options `courier` takes before a command.
    static let topLevel = ["--help", "--version"]

    /// What an operand is, for the commands whose operand the help does not show as a word
    /// list: `completions` takes a shell.
    static func operand(of entry: CommandHelp.Entry) -> CommandHelp.Argument {
        entry.name == "completions" ? .choices(shells) : entry.operand
    }

    /// `text` in single quotes for a shell.
    static func quoted(_ text: String) -> String { ShellWord.singleQuoted(text) }

    // MARK: - bash

    static func bash() -> String {
        var lines = [
            "# bash completion for courier: source <(courier completions bash)",
            "_courier() {",
            #"    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}""#,
            #"    if [ "$COMP_CWORD" -eq 1 ]; then"#,
            "        COMPREPLY=($(compgen -W \(quoted((CommandHelp.commands.map(\.name) + topLevel).joined(separator: " "))) -- \"$cur\"))",
            "        return",
            "    fi",
            #"    case "${COMP_WORDS[1]}" in"#,
        ]
        for entry in CommandHelp.commands {
            lines.append("    \(entry.name))")
            let valued = entry.options.filter { $0.value != nil }
            if !valued.isEmpty {
                lines.append(#"        case "$prev" in"#)
                for option in valued {
                    lines.append(
                        "            \(option.name)) \(bashReply(option.value!)); return ;;")
                }
                lines.append("        esac")
            }
            lines.append(#"        if [[ "$cur" == -* ]]; then"#)
            lines.append(
                "            COMPREPLY=($(compgen -W \(quoted(entry.options.map(\.name).joined(separator: " "))) -- \"$cur\"))"
            )
            lines.append("            return")
            lines.append("        fi")
            lines.append("        \(bashReply(operand(of: entry)))")
            lines.append("        ;;")
        }
        lines += [
            "    esac",
            "}",
            "complete -o filenames -o bashdefault -F _courier courier",
        ]
        return lines.joined(separator: "\n")
    }

    private static func bashReply(_ argument: CommandHelp.Argument) -> String {
        switch argument {
        case .none, .text: return "COMPREPLY=()"
        case .choices(let words):
            return "COMPREPLY=($(compgen -W \(quoted(words.joined(separator: " "))) -- \"$cur\"))"
        case .directory: return #"COMPREPLY=($(compgen -d -- "$cur"))"#
        case .files(let suffix):
            guard let suffix else { return #"COMPREPLY=($(compgen -f -- "$cur"))"# }
            // The matching files, and folders to go into.
            return
                "COMPREPLY=($(compgen -f -X \(quoted("!*" + suffix)) -- \"$cur\") $(compgen -d -- \"$cur\"))"
        }
    }

    // MARK: - zsh

    static func zsh() -> String {
        var lines = [
            "#compdef courier",
            "# zsh completion for courier: courier completions zsh > \"${fpath[1]}/_courier\"",
            "_courier() {",
            "    local -a commands",
            "    commands=(",
        ]
        for entry in CommandHelp.commands {
            lines.append("        " + quoted("\(entry.name):\(entry.summary)"))
        }
        lines += [
            "    )",
            "    if (( CURRENT == 2 )); then",
            "        _describe -t commands 'courier command' commands",
            "        compadd -- \(topLevel.joined(separator: " "))",
            "        return",
            "    fi",
            "    local command=$words[2]",
            "    shift words",
            "    (( CURRENT-- ))",
            "    case $command in",
        ]
        for entry in CommandHelp.commands {
            var specs = entry.options.map { option -> String in
                guard let value = option.value else { return quoted(option.name) }
                return quoted("\(option.name):value:\(zshAction(value))")
            }
            let operand = operand(of: entry)
            if operand != .none {
                specs.append(quoted("*:argument:\(zshAction(operand))"))
            }
            lines.append("    \(entry.name))")
            lines.append("        _arguments -s \\")
            for spec in specs.dropLast() { lines.append("            \(spec) \\") }
            lines.append("            \(specs.last!)")
            lines.append("        ;;")
        }
        lines += [
            "    esac",
            "}",
            // Autoloaded from $fpath, the file is the function's body; sourced, it registers it.
            #"if [ "$funcstack[1]" = "_courier" ]; then"#,
            #"    _courier "$@""#,
            "else",
            "    compdef _courier courier",
            "fi",
        ]
        return lines.joined(separator: "\n")
    }

    private static func zshAction(_ argument: CommandHelp.Argument) -> String {
        switch argument {
        case .none, .text: return " "
        case .choices(let words): return "(\(words.joined(separator: " ")))"
        case .directory: return "_files -/"
        case .files(let suffix): return suffix.map { "_files -g \"*\($0)\"" } ?? "_files"
        }
    }

    // MARK: - fish

    static func fish() -> String {
        var lines = [
            "# fish completion for courier: courier completions fish > ~/.config/fish/completions/courier.fish",
            "complete -c courier -f",
        ]
        let commands = CommandHelp.commands.map(\.name).joined(separator: " ")
        let atStart = "not __fish_seen_subcommand_from \(commands)"
        for entry in CommandHelp.commands {
            lines.append(
                "complete -c courier -n \(quoted(atStart)) -a \(entry.name) -d \(quoted(entry.summary))"
            )
        }
        lines.append("complete -c courier -n \(quoted(atStart)) -l help")
        lines.append("complete -c courier -n \(quoted(atStart)) -l version")
        for entry in CommandHelp.commands {
            let condition = "-n " + quoted("__fish_seen_subcommand_from \(entry.name)")
            for option in entry.options {
                let name =
                    option.name.hasPrefix("--")
                    ? "-l \(option.name.dropFirst(2))" : "-s \(option.name.dropFirst())"
                var line = "complete -c courier \(condition) \(name)"
                if let value = option.value { line += " " + fishArguments(value) }
                lines.append(line)
            }
            let operand = operand(of: entry)
            if operand != .none, operand != .text {
                lines.append("complete -c courier \(condition) \(fishArguments(operand))")
            }
        }
        return lines.joined(separator: "\n")
    }

    private static func fishArguments(_ argument: CommandHelp.Argument) -> String {
        switch argument {
        case .none, .text: return "-x"
        case .choices(let words): return "-x -a " + quoted(words.joined(separator: " "))
        case .directory: return "-x -a '(__fish_complete_directories)'"
        case .files(let suffix):
            return suffix.map { "-x -a " + quoted("(__fish_complete_suffix \($0))") } ?? "-r -F"
        }
    }
}
