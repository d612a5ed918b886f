import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process started with `posix_spawn`, for the tests' servers, the built `courier` and
/// the tools they check against.
///
/// Not Foundation's `Process`: on Linux its `run()` lists `/proc/self/fd` by copying each
/// entry's whole 256-byte name field, which reads past glibc's buffer when an entry ends at a
/// page boundary (swift-corelibs-foundation PR #5472, fixed after the toolchain this project
/// uses). A test process with many sockets open crashed there about one run in two on two
/// cores (`Bad pointer dereference` in `memcpy` under `Process.run()`). Here the child closes
/// every descriptor above 2 with `posix_spawn_file_actions_addclosefrom_np`, and a thread of
/// its own reaps it.
public final class ChildProcess: @unchecked Sendable {
    /// Where one of the child's standard streams goes.
    public enum Stream {
        /// The test process's own.
        case inherit
        /// `/dev/null`.
        case null
        /// A file, created or truncated (for output) or read (for input).
        case file(URL)
        /// A pipe; the test process's end is in ``input``, ``output`` or ``errors``.
        case pipe
    }

    /// The child's process id.
    public let pid: pid_t
    /// The writing end of the child's standard input, when it is a ``Stream/pipe``.
    public let input: FileHandle?
    /// The reading end of the child's standard output, when it is a ``Stream/pipe``.
    public let output: FileHandle?
    /// The reading end of the child's standard error, when it is a ``Stream/pipe``.
    public let errors: FileHandle?

    private let ended = NSCondition()
    private var status: Int32?

    /// Starts `executable` (a path) with `arguments`, in `directory`, with the test process's
    /// environment and `environment` over it.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:],
        directory: URL? = nil, stdin: Stream = .null, stdout: Stream = .inherit,
        stderr: Stream = .inherit
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var childEnds: [Int32] = []
        defer { for descriptor in childEnds { close(descriptor) } }
        var ours: [Int32?] = [nil, nil, nil]
        for (target, stream) in [stdin, stdout, stderr].enumerated() {
            let forInput = target == 0
            switch stream {
            case .inherit:
                break
            case .null:
                posix_spawn_file_actions_addopen(
                    &actions, Int32(target), "/dev/null", forInput ? O_RDONLY : O_WRONLY, 0)
            case .file(let url):
                posix_spawn_file_actions_addopen(
                    &actions, Int32(target), url.path,
                    forInput ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            case .pipe:
                var ends: [Int32] = [-1, -1]
                // Close-on-exec, so that no other child keeps this pipe open (pipe2 is not
                // on Darwin; the child closes what it inherits anyway, see below).
                guard pipe(&ends) == 0 else {
                    throw ChildProcessError(executable: executable, call: "pipe", code: errno)
                }
                for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
                let (child, parent) = forInput ? (ends[0], ends[1]) : (ends[1], ends[0])
                childEnds.append(child)
                ours[target] = parent
                posix_spawn_file_actions_adddup2(&actions, child, Int32(target))
            }
        }
        if let directory {
            let code = Self.addChdir(&actions, directory.path)
            guard code == 0 else {
                throw ChildProcessError(executable: executable, call: "addchdir", code: code)
            }
        }
        #if os(Linux)
            let code = Self.addCloseFrom(&actions, 3)
            guard code == 0 else {
                throw ChildProcessError(executable: executable, call: "addclosefrom", code: code)
            }
        #endif
        let merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard spawned == 0 else {
            for descriptor in ours.compactMap({ $0 }) { close(descriptor) }
            throw ChildProcessError(executable: executable, call: "posix_spawn", code: spawned)
        }
        self.pid = pid
        input = ours[0].map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        output = ours[1].map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        errors = ours[2].map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        Thread.detachNewThread { [self] in reap() }
    }

    /// Runs `executable` to its end and returns its exit status and standard output, waiting
    /// on a thread of its own: a test that blocked a thread of the cooperative pool (two on a
    /// two-core machine) on a child process starved every other test's timers and continuations
    /// for as long as the child ran (26 s seen with the schema checker).
    public static func output(
        _ executable: String, _ arguments: [String], stderr: Stream = .null
    ) async throws -> (status: Int32, stdout: Data) {
        let process = try ChildProcess(executable, arguments, stdout: .pipe, stderr: stderr)
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let data = process.output!.readDataToEndOfFile()
                let status = process.waitUntilExit()
                continuation.resume(returning: (status, data))
            }
        }
    }

    /// Waits for the exit on this thread (never on the cooperative pool: see ``exit(seconds:)``).
    /// Returns the exit code, or the signal's number when a signal ended the child.
    @discardableResult
    public func waitUntilExit() -> Int32 {
        ended.lock()
        defer { ended.unlock() }
        while status == nil { ended.wait() }
        return status!
    }

    /// Waits up to `seconds` off the cooperative pool; `nil` if the child still runs.
    public func exit(seconds: Double) async -> Int32? {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { [self] in
                ended.lock()
                let deadline = Date(timeIntervalSinceNow: seconds)
                while status == nil, ended.wait(until: deadline) {}
                let result = status
                ended.unlock()
                continuation.resume(returning: result)
            }
        }
    }

    /// Sends `signal` to the child (nothing, once it has been reaped).
    public func send(_ signal: Int32) {
        ended.lock()
        defer { ended.unlock() }
        if status == nil { kill(pid, signal) }
    }

    private func reap() {
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0, errno == EINTR {}
        // The wait(2) status: the low 7 bits are the signal that ended it, or 0 for an exit
        // whose code is in the next byte (the WIFEXITED macros are not imported into Swift).
        let signal = raw & 0x7f
        ended.lock()
        status = signal == 0 ? (raw >> 8) & 0xff : signal
        ended.broadcast()
        ended.unlock()
    }

    private typealias AddChdir =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>)
        -> Int32
    private typealias AddCloseFrom =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    // glibc 2.29 and 2.34 have these, but Swift's Glibc module does not import them.
    private static func addChdir(
        _ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ path: String
    ) -> Int32 {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addchdir_np") else { return ENOSYS }
        return unsafeBitCast(symbol, to: AddChdir.self)(actions, path)
    }

    private static func addCloseFrom(
        _ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ from: Int32
    ) -> Int32 {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else {
            return ENOSYS
        }
        return unsafeBitCast(symbol, to: AddCloseFrom.self)(actions, from)
    }
}

/// A child process could not be started.
public struct ChildProcessError: Error, CustomStringConvertible {
    public let executable: String
    public let call: String
    public let code: Int32

    public var description: String {
        "cannot start \(executable): \(call) failed: \(String(cString: strerror(code)))"
    }
}
