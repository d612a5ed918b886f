@testable import CourierJobs
import CourierTestSupport
import Foundation
import Testing

/// `courier completions bash|zsh|fish` and `courier man`, both made from the commands' help:
/// scripts the shells accept, completions that offer each command's options, and a manual
/// page that renders without warnings and carries every command's help.
@Suite("completions and man page")
struct ShellIntegrationTests {
    static func tool(_ name: String) -> URL? {
        ["/usr/bin/", "/bin/", "/usr/local/bin/"].lazy.map { URL(fileURLWithPath: $0 + name) }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// The script for `shell`, in a file of its own.
    static func script(_ shell: String) async throws -> URL {
        let result = try await CourierBinary.run(["completions", shell])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stdout.isEmpty)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-completion-\(UUID().uuidString).\(shell)")
        try result.stdout.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    /// Checks `shell`'s script with the shell's own syntax check (`bash -n`, `zsh -n`,
    /// `fish --no-execute`).
    static func checkSyntax(_ shell: String, _ flag: String) async throws {
        let binary = try #require(tool(shell))
        let file = try await script(shell)
        defer { try? FileManager.default.removeItem(at: file) }
        let check = try await CourierBinary.run([flag, file.path], executable: binary)
        #expect(check.status == 0, "\(shell) \(flag): \(check.stderr)")
        #expect(check.stderr.isEmpty, "\(check.stderr)")
    }

    @Test(.enabled(if: tool("bash") != nil, "bash is not installed"))
    func bashScriptParses() async throws { try await Self.checkSyntax("bash", "-n") }

    @Test(.enabled(if: tool("zsh") != nil, "zsh is not installed: its script is not checked"))
    func zshScriptParses() async throws { try await Self.checkSyntax("zsh", "-n") }

    @Test(.enabled(if: tool("fish") != nil, "fish is not installed: its script is not checked"))
    func fishScriptParses() async throws { try await Self.checkSyntax("fish", "--no-execute") }

    /// What bash's completion offers for the words typed (the last one being completed), in
    /// `folder`.
    static func bashCompletes(_ words: [String], in folder: URL, script: URL) async throws
        -> [String]
    {
        let quoted = words.map { "'\($0)'" }.joined(separator: " ")
        let program = """
            source '\(script.path)'
            COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1)
            _courier
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let result = try await CourierBinary.run(
            ["-c", program], executable: try #require(tool("bash")), directory: folder)
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout.split(separator: "\n").map(String.init).sorted()
    }

    @Test(.enabled(if: tool("bash") != nil, "bash is not installed"))
    func bashCompletesCommandsOptionsValuesAndJobFiles() async throws {
        let script = try await Self.script("bash")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-complete-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("jobs"), withIntermediateDirectories: true)
        defer {
            try? FileManager.default.removeItem(at: folder)
            try? FileManager.default.removeItem(at: script)
        }
        for file in ["nightly.json", "notes.txt", "run.jsonl"] {
            try Data().write(to: folder.appendingPathComponent(file))
        }
        let commands = try await Self.bashCompletes(["courier", ""], in: folder, script: script)
        for command in CommandHelp.commands.map(\.name) {
            #expect(commands.contains(command), "\(commands)")
        }
        let options = try await Self.bashCompletes(
            ["courier", "run", "--d"], in: folder, script: script)
        #expect(options == ["--deadline", "--dry-run"])
        let backends = try await Self.bashCompletes(
            ["courier", "run", "--backend", ""], in: folder, script: script)
        #expect(backends == ["curl", "urlsession"])
        let jobs = try await Self.bashCompletes(["courier", "run", ""], in: folder, script: script)
        #expect(jobs == ["jobs", "nightly.json"], "job files and folders, not \(jobs)")
        let logs = try await Self.bashCompletes(
            ["courier", "report", ""], in: folder, script: script)
        #expect(logs == ["jobs", "run.jsonl"])
        let benchOptions = try await Self.bashCompletes(
            ["courier", "bench", "-"], in: folder, script: script)
        #expect(benchOptions.contains("-n") && benchOptions.contains("--rate"))
    }

    @Test func anUnknownShellIsAUsageError() async throws {
        let result = try await CourierBinary.run(["completions", "tcsh"])
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty)
    }

    @Test(.enabled(if: tool("groff") != nil, "groff is not installed: the page is not rendered"))
    func theManPageRendersWithoutWarningsAndCarriesEveryCommandsHelp() async throws {
        let page = try await CourierBinary.run(["man"])
        #expect(page.status == 0, "\(page.stderr)")
        #expect(page.stdout.hasPrefix(".TH COURIER 1"))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-\(UUID().uuidString).1")
        try page.stdout.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let rendered = try await CourierBinary.run(
            ["-man", "-Tutf8", "-ww", "-P", "-cbou", file.path],
            executable: try #require(Self.tool("groff")))
        #expect(rendered.status == 0)
        #expect(rendered.stderr.isEmpty, "groff warns: \(rendered.stderr)")
        // groff typesets quotes and dashes; compare the words as the help writes them.
        let text = rendered.stdout.replacingOccurrences(of: "\u{2019}", with: "'")
            .replacingOccurrences(of: "\u{2018}", with: "`")
            .replacingOccurrences(of: "\u{2010}", with: "-")
            .replacingOccurrences(of: "\u{2212}", with: "-")
        let renderedLines = Set(
            text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) })
        for command in CommandHelp.commands.map(\.name) {
            let help = try await CourierBinary.run([command, "--help"])
            for line in help.stdout.split(separator: "\n") {
                let wanted = line.trimmingCharacters(in: .whitespaces)
                #expect(renderedLines.contains(wanted), "the page lacks \(command)'s \"\(wanted)\"")
            }
        }
    }
}
