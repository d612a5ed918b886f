import Foundation

/// A test server child process that prints `READY <port>...` and exits when its standard input
/// closes, so it dies with the test process however that ends.
public final class ServerProcess: @unchecked Sendable {
    /// The ports the server printed, in order.
    public let ports: [Int]
    private let process: Process
    private let input: Pipe

    /// Starts `script` (a file in `Tests/Fixtures`) with python3 and waits for its READY line.
    public init(script: String, arguments: [String] = []) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            ["python3", PackagePaths.fixtures.appendingPathComponent(script).path]
            + arguments
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else {
                throw ServerStartError(
                    script: script, output: String(decoding: line, as: UTF8.self))
            }
            line.append(chunk)
        }
        let words = String(decoding: line, as: UTF8.self).split(whereSeparator: \.isWhitespace)
        guard words.first == "READY" else {
            process.terminate()
            throw ServerStartError(script: script, output: String(decoding: line, as: UTF8.self))
        }
        self.ports = words.dropFirst().compactMap { Int($0) }
        self.process = process
        self.input = input
    }

    /// Stops the server now rather than at process exit.
    public func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}

/// A fixture server did not start.
public struct ServerStartError: Error, CustomStringConvertible {
    public let script: String
    public let output: String

    public init(script: String, output: String) {
        self.script = script
        self.output = output
    }

    public var description: String {
        "test server \(script) did not start (printed: \(output.isEmpty ? "nothing" : output)); "
            + "run 'make deps' to install python3-httpbin and gunicorn"
    }
}

/// Where the package's files are, found from this source file's path.
public enum PackagePaths {
    public static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    public static let fixtures = root.appendingPathComponent("Tests/Fixtures")
}
