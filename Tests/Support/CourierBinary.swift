import Foundation

/// Runs the built `courier` executable, as a user would.
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

    /// Runs `courier` with the arguments and waits for it to exit.
    public static func run(
        _ arguments: [String], environment: [String: String] = [:], directory: URL? = nil
    ) throws -> Result {
        let process = Process()
        process.executableURL = url
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        if let directory { process.currentDirectoryURL = directory }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read both pipes while it runs, so a chatty run cannot fill one and block.
        let stdout = Locked(Data())
        let reader = Thread { stdout.set(output.fileHandleForReading.readDataToEndOfFile()) }
        reader.start()
        let stderr = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while !stdout.done { usleep(1000) }
        return Result(
            status: process.terminationStatus,
            stdout: String(decoding: stdout.data, as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// Starts `courier` without waiting, for tests that signal it mid-run.
    public static func launch(_ arguments: [String], directory: URL) throws -> Running {
        let process = Process()
        process.executableURL = url
        process.arguments = arguments
        process.currentDirectoryURL = directory
        let output = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-out-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let handle = try FileHandle(forWritingTo: output)
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return Running(process: process, output: output)
    }

    /// A `courier` process still running.
    public final class Running: @unchecked Sendable {
        let process: Process
        let output: URL

        init(process: Process, output: URL) {
            self.process = process
            self.output = output
        }

        /// Sends a signal, for example `SIGTERM`.
        public func send(_ signal: Int32) { kill(process.processIdentifier, signal) }

        /// Waits up to `seconds` for the exit status and the combined output; kills it after.
        public func wait(seconds: Double) -> (status: Int32?, output: String) {
            let deadline = Date().addingTimeInterval(seconds)
            while process.isRunning, Date() < deadline { usleep(20_000) }
            var status: Int32?
            if process.isRunning {
                process.terminate()
                process.waitUntilExit()
            } else {
                status = process.terminationStatus
            }
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            try? FileManager.default.removeItem(at: output)
            return (status, text)
        }
    }

    private final class Locked: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Data
        private var finished = false
        init(_ value: Data) { self.value = value }
        func set(_ data: Data) {
            lock.withLock {
                value = data; finished = true
            }
        }
        var done: Bool { lock.withLock { finished } }
        var data: Data { lock.withLock { value } }
    }
}
