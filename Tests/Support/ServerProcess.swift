import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A test server child process that prints `READY <port>...` and exits when its standard input
/// closes, so it dies with the test process however that ends.
public final class ServerProcess: @unchecked Sendable {
    /// The ports the server printed, in order.
    public let ports: [Int]
    /// Every word the server printed after READY (ports, and any file it names).
    public let fields: [String]
    private let process: ChildProcess

    /// Starts `script` (a file in `Tests/Fixtures`) with python3 and waits for its READY line.
    public init(script: String, arguments: [String] = []) throws {
        let process = try ChildProcess(
            "/usr/bin/env",
            ["python3", PackagePaths.fixtures.appendingPathComponent(script).path] + arguments,
            stdin: .pipe, stdout: .pipe)
        let output = process.output!
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.availableData
            guard !chunk.isEmpty else {
                throw ServerStartError(
                    script: script, output: String(decoding: line, as: UTF8.self))
            }
            line.append(chunk)
        }
        let words = String(decoding: line, as: UTF8.self).split(whereSeparator: \.isWhitespace)
        guard words.first == "READY" else {
            process.send(SIGTERM)
            throw ServerStartError(script: script, output: String(decoding: line, as: UTF8.self))
        }
        self.ports = words.dropFirst().compactMap { Int($0) }
        self.fields = words.dropFirst().map(String.init)
        self.process = process
    }

    /// Stops the server now rather than at process exit.
    public func stop() {
        try? process.input?.close()
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
