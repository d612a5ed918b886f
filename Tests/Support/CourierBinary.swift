import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs the built `courier` executable, as a user would.
///
/// Waiting is asynchronous: a test blocked on a child process would hold one of the few
/// threads of Swift's cooperative pool, and starve every timer in the test process.
public struct CourierBinary: Sendable {
    /// What one run produced.
    public struct Result: Sendable {
        public let status: Int32
        public let stdout: String
        public let stderr: String
    }

    /// The executable beside the test bundle in the build folder.
    public static var url: URL {
        let testBundle = URL(fileURLWithPath: CommandLine.arguments[0])
        var folder = testBundle.deletingLastPathComponent()
        // On Linux the bundle is .build/debug/X.xctest; on macOS X.xctest/Contents/MacOS/X.
        while folder.pathExtension == "xctest" || folder.lastPathComponent == "MacOS"
            || folder.lastPathComponent == "Contents"
        {
            folder.deleteLastPathComponent()
        }
        return folder.appendingPathComponent("courier")
    }

    /// Runs `courier` (or `executable`, for shell pipelines around it) with the arguments and
    /// returns when it has exited.
    public static func run(
        _ arguments: [String], executable: URL? = nil, environment: [String: String] = [:],
        directory: URL? = nil
    ) async throws -> Result {
        let running = try launch(
            arguments, executable: executable, environment: environment, directory: directory)
        let (status, stdout, stderr) = await running.exit()
        return Result(status: status ?? -1, stdout: stdout, stderr: stderr)
    }

    /// Starts `courier` without waiting, for tests that signal it mid-run.
    public static func launch(
        _ arguments: [String], executable: URL? = nil, environment: [String: String] = [:],
        directory: URL?,
        inTerminal: Bool = false
    ) throws -> Running {
        let executablePath: String
        let allArguments: [String]
        if inTerminal {
            // script(1) gives courier a pseudo-terminal, as an interactive user has.
            let command = ([url.path] + arguments).map { "'\($0)'" }.joined(separator: " ")
            executablePath = "/usr/bin/script"
            allArguments = ["-qec", command, "/dev/null"]
        } else {
            executablePath = (executable ?? url).path
            allArguments = arguments
        }
        let files = (0..<2).map { _ in
            FileManager.default.temporaryDirectory.appendingPathComponent(
                "courier-out-\(UUID().uuidString)")
        }
        let process = try ChildProcess(
            executablePath, allArguments, environment: environment, directory: directory,
            stdin: .null, stdout: .file(files[0]), stderr: .file(files[1]))
        return Running(process: process, stdout: files[0], stderr: files[1])
    }

    /// A `courier` process that may still be running.
    public final class Running: @unchecked Sendable {
        let process: ChildProcess
        let stdout: URL
        let stderr: URL

        init(process: ChildProcess, stdout: URL, stderr: URL) {
            self.process = process
            self.stdout = stdout
            self.stderr = stderr
        }

        /// Sends a signal, for example `SIGTERM`.
        public func send(_ signal: Int32) { process.send(signal) }

        /// Waits up to `seconds` for the exit, off the cooperative pool; kills the process after.
        /// Returns the status (`nil` if it had to be killed), stdout and stderr. The default is
        /// a hang guard, never a speed: the longest run of the suite takes some 20 s on a quiet
        /// machine.
        public func exit(seconds: Double = 300) async -> (Int32?, String, String) {
            let status = await process.exit(seconds: seconds)
            if status == nil {
                process.send(SIGKILL)
                process.waitUntilExit()
            }
            let output = (try? String(contentsOf: stdout, encoding: .utf8)) ?? ""
            let errors = (try? String(contentsOf: stderr, encoding: .utf8)) ?? ""
            try? FileManager.default.removeItem(at: stdout)
            try? FileManager.default.removeItem(at: stderr)
            return (status, output, errors)
        }

        /// Waits until the process has written `text` to stderr: looks every 20 ms, for at
        /// most `seconds` (a hang guard), and throws if it never comes.
        public func waitForStandardError(containing text: String, seconds: Double) async throws {
            let deadline = ContinuousClock.now + .seconds(seconds)
            while ContinuousClock.now < deadline {
                let written = (try? String(contentsOf: stderr, encoding: .utf8)) ?? ""
                if written.contains(text) { return }
                try await Task.sleep(for: .milliseconds(20))
            }
            throw WaitError(description: "stderr never said \"\(text)\" in \(seconds) s")
        }

        /// A wait that ran out.
        public struct WaitError: Error, CustomStringConvertible {
            public let description: String
        }

        /// Waits up to `seconds`; returns the status and stdout and stderr together.
        public func wait(seconds: Double) async -> (status: Int32?, output: String) {
            let (status, output, errors) = await exit(seconds: seconds)
            return (status, output + errors)
        }
    }
}
