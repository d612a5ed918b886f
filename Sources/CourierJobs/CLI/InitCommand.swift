import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `courier init JOB.json [--base-url URL]`: a job file to start from, which validates as it
/// stands and says in its `description`s what each part does.
enum InitCommand {
    static let usage = """
        Usage: courier init JOB.json [--base-url URL]
        Writes a new job file to start from: a listing that follows its pages and captures
        ids, one saved request per id, retries, a concurrency cap. Each part says what it does
        in a "description"; it validates as written. Its name is the file's name without
        .json. An existing file is never replaced (exit 2).
          --base-url URL the API's base URL (default https://api.example.com)
        """

    static func run(_ arguments: [String]) -> Int32 {
        var parser = ArgumentParser(arguments, command: "init")
        let path: String
        let baseURL: String
        do throws(UsageError) {
            if parser.flag("--help") {
                Console.output(usage)
                return CommandLineInterface.ExitCode.success
            }
            let given = try parser.option("--base-url")
            if let given, let problem = HARImport.baseURLProblem(given) {
                throw UsageError("init: --base-url \(problem), got '\(given)'")
            }
            baseURL = given ?? "https://api.example.com"
            path = try parser.positional("JOB.json")
            try parser.finish()
        } catch {
            Console.error("courier \(error.message)")
            return CommandLineInterface.ExitCode.usage
        }
        let name = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
        guard path.hasSuffix(".json"), JobDecoder.isValidName(name) else {
            Console.error(
                "courier init: expects a file name like nightly.json (letters, digits, '.', '_' and '-' before .json: it names the job), got '\(path)'"
            )
            return CommandLineInterface.ExitCode.usage
        }
        let text = skeleton(name: name, baseURL: baseURL)
        // O_EXCL: a file that is there, or appears meanwhile, is never replaced.
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            let reason =
                errno == EEXIST
                ? "it exists; nothing was written" : String(cString: strerror(errno))
            Console.error("courier init: \(path): \(reason)")
            return CommandLineInterface.ExitCode.usage
        }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard written == bytes.count, synced else {
            Console.error("courier init: \(path): could not write the whole file")
            return CommandLineInterface.ExitCode.usage
        }
        Console.output(
            """
            wrote \(path) (job "\(name)"). Next:
              1. set \(baseURL == nil ? "baseURL, " : "")the paths and the JSON pointers to your API's (docs/job-file.md)
              2. courier validate \(ShellWord.quoted(path))
              3. courier run \(ShellWord.quoted(path)) --dry-run     (what it would send)
              4. courier run \(ShellWord.quoted(path))               (outputs and logs beside it)
            """)
        return CommandLineInterface.ExitCode.success
    }

    /// The job file's text.
    static func skeleton(name: String, baseURL: String) -> String {
        let base = JSONWriter.string(.string(baseURL))
        return """
            {
              "version": 1,
              "name": "\(name)",
              "description": "Made by courier init. Outputs go to out/\(name)/ and logs to logs/\(name)/, beside this file. Keys: docs/job-file.md.",
              "baseURL": \(base),
              "concurrency": 4,
              "retry": { "maxAttempts": 3 },
              "headers": { "Accept": "application/json" },
              "tasks": [
                {
                  "id": "list",
                  "description": "GET /items, then each next page its Link header names; captures the id of every item on every page.",
                  "path": "/items",
                  "paginate": { "next": { "linkHeader": "next" } },
                  "capture": { "ids": { "json": "/items/*/id" } }
                },
                {
                  "id": "item-{id}",
                  "description": "One request per captured id, saved as items/<id>.json; a 2xx is expected, else the task fails and `courier run --resume` sends it again.",
                  "path": "/items/{id}",
                  "foreach": { "id": { "capture": "ids" } },
                  "save": "items/{id}.json"
                }
              ]
            }

            """
    }
}
