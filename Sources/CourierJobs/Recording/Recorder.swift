import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Keeps each answer a run gets (`courier run JOB --record DIR`): a line of
/// `DIR/recording.jsonl` per attempt, its body in `DIR/bodies/SHA256` (written once, through a
/// temporary and a rename). Secrets never go in: the run's redactor takes every secret it knows
/// (a captured token too: a line is recorded when its attempt is logged, after the captures)
/// out of the bodies, and secret header fields are `<redacted>`.
final class Recorder: Sendable {
    let folder: URL
    private let descriptor: Int32
    /// Whether a line could not be written: the recording is then incomplete, and the run
    /// says so.
    let failure = Locked<String?>(nil)

    /// Opens `folder` for a new recording: it must be empty or not exist (a recording is
    /// never written over).
    init(folder: URL) throws(RecordingError) {
        self.folder = folder
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        guard names.isEmpty else {
            throw RecordingError(
                "--record \(folder.path): the folder holds files already; a recording goes into an empty or new folder, never over another"
            )
        }
        do {
            try FileSystem.makeFolders(folder.appendingPathComponent(RecordedAnswer.bodies))
        } catch {
            throw RecordingError("--record: \(error)")
        }
        let path = folder.appendingPathComponent(RecordedAnswer.file).path
        let opened = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0o644)
        guard opened >= 0 else {
            throw RecordingError(
                "--record: \(FileError(path: path, action: "create", code: errno))")
        }
        descriptor = opened
    }

    deinit { close(descriptor) }

    /// Records an attempt that got no response (a refused connection, a redirect refused),
    /// so that its rehearsal fails the same way rather than as "not in the recording". One
    /// the run itself cancelled (its deadline, a signal) is not an answer, and is left out.
    func record(request: HTTPRequest, error: HTTPError, redactor: Redactor) {
        guard error.kind != .cancelled else { return }
        let answer = RecordedAnswer(
            request: RequestDigest.hex(of: request, redactor: redactor, scrubbingURL: true),
            method: request.method.rawValue, url: request.displayURL.absoluteString, status: 0,
            headers: [], body: "",
            error: RecordedAnswer.Failure(
                kind: error.kind.rawValue, message: redactor.scrub(error.message)))
        write(redactor.scrubJSON(answer.line))
    }

    /// Records one attempt's answer; `body` is its body as the run has it (in memory, or the
    /// file it was saved to).
    func record(
        request: HTTPRequest, response: HTTPResponse, body: Data, redactor: Redactor
    ) {
        let kept = redactor.scrub(bytes: Array(body))
        let name = SHA256.hex(of: kept)
        let file = folder.appendingPathComponent("\(RecordedAnswer.bodies)/\(name)")
        do {
            if !FileManager.default.fileExists(atPath: file.path) {
                try OutputFile.write(Data(kept), to: file)
            }
        } catch {
            failure.withLock { $0 = $0 ?? "\(error)" }
            return
        }
        let fields = response.headers.map { field in
            RecordedAnswer.Field(
                name: field.name,
                value: SecretHeaders.isSecret(field.name)
                    ? Redactor.placeholder : redactor.scrub(field.value))
        }
        var answer = RecordedAnswer(
            request: RequestDigest.hex(of: request, redactor: redactor, scrubbingURL: true),
            method: request.method.rawValue, url: request.displayURL.absoluteString,
            status: response.status, headers: fields, body: name)
        if response.redirectCount > 0 {
            answer.redirected = RecordedAnswer.Redirected(
                url: redactor.redirectTarget(of: response, for: request),
                hops: response.redirectCount)
        }
        write(redactor.scrubJSON(answer.line))
    }

    /// Appends a line; a failure marks the recording incomplete.
    private func write(_ line: [UInt8]) {
        let failed = line.withUnsafeBytes { POSIX.writeAll(descriptor, $0) }
        if let failed {
            let error = FileError(path: folder.path, action: "write the recording in", code: failed)
            failure.withLock { $0 = $0 ?? "\(error)" }
        }
    }
}

/// Why a recording cannot be made or read, in words.
struct RecordingError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) { self.description = description }
}
