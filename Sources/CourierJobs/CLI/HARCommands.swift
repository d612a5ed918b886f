import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `courier export --har LOG... [-o FILE]`
enum ExportCommand {
    static let usage = """
        Usage: courier export --har LOG.jsonl... [-o FILE]
        Writes the request attempts of run logs (- is stdin; a folder is every .jsonl under
        it) as a HAR 1.2 archive, for browsers' network panels and HAR viewers: a page per
        run, an entry per attempt with its headers, request body, status and timings.
        Secrets stay <redacted>; response bodies are not in the logs, so not in the HAR.
          -o FILE   write the HAR to FILE (default: standard output)
        Exit codes: 0 written, 2 bad usage or no request line could be read.
        """

    static func run(_ arguments: [String]) -> Int32 {
        var parser = ArgumentParser(arguments, command: "export")
        let output: String?
        let logs: [String]
        do throws(UsageError) {
            if parser.flag("--help") {
                Console.output(usage)
                return CommandLineInterface.ExitCode.success
            }
            guard parser.flag("--har") else {
                throw UsageError("export: say which format (--har); see 'courier export --help'")
            }
            let long = try parser.outputFile("--output")
            output = try parser.outputFile("-o") ?? long
            logs = parser.positionals()
            try parser.finish()
            guard !logs.isEmpty else {
                throw UsageError("export: missing LOG.jsonl; see 'courier export --help'")
            }
        } catch {
            Console.error("courier \(error.message)")
            return CommandLineInterface.ExitCode.usage
        }
        var archive = HARExport()
        for entry in LogReader(
            paths: LogFiles.ordered(logs), warn: { Console.error("courier: \($0)") },
            responseHeaders: true)
        {
            archive.add(entry.line)
        }
        guard !archive.isEmpty else {
            Console.error("courier export: no request lines could be read from the logs given")
            return CommandLineInterface.ExitCode.usage
        }
        var bytes = JSONWriter.bytes(archive.value())
        bytes.append(0x0A)
        guard let output, output != "-" else {
            FileHandle.standardOutput.write(Data(bytes))
            return CommandLineInterface.ExitCode.success
        }
        do {
            try OutputFile.write(Data(bytes), to: URL(fileURLWithPath: output))
        } catch {
            Console.error("courier export: cannot write \(output): \(error)")
            return CommandLineInterface.ExitCode.usage
        }
        return CommandLineInterface.ExitCode.success
    }
}

/// `courier import --har FILE [-o JOB.json] [--name NAME] [--base-url URL]`
enum ImportCommand {
    static let usage = """
        Usage: courier import --har FILE.har [-o JOB.json] [--name NAME] [--base-url URL]
        Writes a job file from a recorded HAR: a task per entry (method, URL, query, headers,
        body). Secret-looking headers and query parameters (Authorization, Cookie, API keys,
        names with token, secret, key, password or auth in them) become ${env:NAME}
        references; the variables to set are listed on stderr. Connection and Host headers,
        Content-Length and Accept-Encoding are left to the transport.
          -o FILE          write the job to FILE (default: standard output)
          --name NAME      the job's name (default: the HAR file's name)
          --base-url URL   send the recording to another server: URL (http or https, a path
                           allowed, no query) is the job's baseURL, and every request to the
                           recorded origin (the one most requests went to) becomes a path
                           joined to it; the others keep their URLs. Headers and bodies are
                           copied as recorded.
        Exit codes: 0 written, 2 bad usage (a --base-url that is not such a URL) or a file
        that is not a HAR.
        """

    static func run(_ arguments: [String]) -> Int32 {
        var parser = ArgumentParser(arguments, command: "import")
        let output: String?
        let name: String?
        let baseURL: String?
        let file: String
        do throws(UsageError) {
            if parser.flag("--help") {
                Console.output(usage)
                return CommandLineInterface.ExitCode.success
            }
            guard let har = try parser.option("--har") else {
                throw UsageError("import: missing --har FILE; see 'courier import --help'")
            }
            file = har
            let long = try parser.outputFile("--output")
            output = try parser.outputFile("-o") ?? long
            name = try parser.option("--name")
            baseURL = try parser.option("--base-url")
            try parser.finish()
            // The job file's own rule, so that what is written validates (trial FFF: `..`).
            if let name, !JobDecoder.isValidName(name) {
                throw UsageError(
                    "import: --name takes letters A-Z a-z, digits, '.', '_' and '-', and not dots alone (it names the log folder), found '\(name)'"
                )
            }
            if let baseURL, let problem = HARImport.baseURLProblem(baseURL) {
                throw UsageError("import: --base-url \(problem), found '\(baseURL)'")
            }
        } catch {
            Console.error("courier \(error.message)")
            return CommandLineInterface.ExitCode.usage
        }
        guard let data = FileManager.default.contents(atPath: file) else {
            let reason =
                FileManager.default.fileExists(atPath: file) ? "cannot read it" : "no such file"
            Console.error("courier import: \(file): \(reason)")
            return CommandLineInterface.ExitCode.usage
        }
        let imported: HARImport
        do throws(HARImport.Failure) {
            imported = try HARImport(
                har: Array(data), name: name ?? defaultName(file: file), baseURL: baseURL)
        } catch {
            Console.error("courier import: \(file): \(error.message)")
            return CommandLineInterface.ExitCode.usage
        }
        for warning in imported.warnings { Console.error("courier import: \(warning)") }
        if !imported.variables.isEmpty {
            Console.error("courier import: set these environment variables before running the job:")
            for variable in imported.variables {
                Console.error("  \(variable.name)  (\(variable.source))")
            }
        }
        guard let output, output != "-" else {
            FileHandle.standardOutput.write(Data(imported.jobText.utf8))
            return CommandLineInterface.ExitCode.success
        }
        // A job file that is there is the user's, as `init` keeps it (trial EEE: a
        // hand-written job was replaced); a link that leads nowhere is there too (trial FFF:
        // replaced by a file), so the link itself is looked at.
        var status = stat()
        if lstat(output, &status) == 0 {
            let link = status.st_mode & S_IFMT == S_IFLNK ? " (a symbolic link)" : ""
            Console.error("courier import: \(output): it exists\(link); nothing was written")
            return CommandLineInterface.ExitCode.usage
        }
        do {
            try OutputFile.write(Data(imported.jobText.utf8), to: URL(fileURLWithPath: output))
        } catch {
            Console.error("courier import: cannot write \(output): \(error)")
            return CommandLineInterface.ExitCode.usage
        }
        return CommandLineInterface.ExitCode.success
    }

    private static func isNameCharacter(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || "._-".contains(character))
    }

    /// The HAR file's name without its extension, made a valid job name.
    private static func defaultName(file: String) -> String {
        let base = URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent
        let cleaned = String(base.map { isNameCharacter($0) ? $0 : "-" })
        return JobDecoder.isValidName(cleaned) ? cleaned : "imported"
    }
}
