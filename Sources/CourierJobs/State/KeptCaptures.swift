import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The values one task captured in one run, kept in `outputDir/.courier/captures/KEY` so that a
/// `--resume` or `replay --job` that needs them (a fan-out's children not done yet) takes them
/// from here instead of sending the task (every page of a listing) again.
///
/// Written like a records part (``RecordsPart``): page by page into a temporary beside the
/// file, `fsync`ed and renamed into place when the task succeeds, before its `ok` line; a
/// failed task's temporary is removed. The file names its run: a resume uses it only when its
/// run is the one whose `ok` the history holds for the task (``TaskHistory/okRuns``), so a
/// file left by an older run, or by another shard, is never taken for this one's. Anything
/// else (no file, a file that does not parse) and the task is sent again, as before files
/// were kept. Secret captures (a login token) are never written, nor values that hold any other
/// secret the run knows (they would be written unredacted): such a task is sent again.
///
/// The writer is used by one task at a time: values are added on the task's loop, written
/// and committed on the run's file-work threads (``FileWork``).
final class KeptCaptures: Sendable {
    private let folder: URL
    private let name: String
    private let task: String
    private let run: String
    private let redactor: Redactor
    private let state = Locked<State>(State())

    private struct State {
        /// Lines added and not written yet: the first is the file's header (run and task),
        /// each other one response's values of one capture.
        var pending: [UInt8] = []
        var file: AppendingTemporary?
        /// A value held a secret: nothing is kept.
        var spoiled = false
    }

    /// The writer for `task`, or `nil` when it captures nothing or anything secret (decided
    /// before anything is made: every task of a job with captures asks, and a failable
    /// initializer had made the writer and its lock first, then dropped them).
    /// `redactor`: the run's, which knows every secret so far. A shard's file has its shard
    /// in its name: every shard sends the tasks that capture, and each keeps its own.
    static func writer(
        for task: ExpandedTask, job: Job, run: String, shard: Shard?, redactor: Redactor
    ) -> KeptCaptures? {
        let captures = task.captures(in: job)
        guard !captures.isEmpty, !captures.contains(where: \.secret) else { return nil }
        return KeptCaptures(task: task, job: job, run: run, shard: shard, redactor: redactor)
    }

    private init(task: ExpandedTask, job: Job, run: String, shard: Shard?, redactor: Redactor) {
        folder = Self.folder(outputDir: job.outputDir)
        name = Self.fileName(job: job.name, task: task.id) + (shard.map { "." + $0.fileTag } ?? "")
        self.task = task.id
        self.run = run
        self.redactor = redactor
    }

    /// Adds one response's values of `rule`, to be written by the next ``flush(temporaries:)``.
    func append(_ values: [String], for rule: CaptureRule) {
        let line =
            JSONWriter.bytes(
                .object([
                    ("capture", .string(rule.name)), ("values", .array(values.map { .string($0) })),
                ])) + [0x0A]
        let spoiled = redactor.scrubJSON(line) != line
        state.withLock { state in
            if spoiled { state.spoiled = true }
            if !state.spoiled { state.pending += line }
        }
    }

    /// Whether values wait to be written.
    var hasPending: Bool { state.withLock { !$0.pending.isEmpty && !$0.spoiled } }

    /// Writes the values added so far to the temporary (made the first time). Blocking.
    func flush(temporaries: StaleTemporaries) throws(FileError) {
        try state.withLock { state in
            Result { () throws(FileError) in try write(&state, temporaries: temporaries) }
        }.get()
    }

    /// Puts the file in place, `fsync`ed and renamed; its folder is returned, to sync.
    /// Blocking.
    func commit(temporaries: StaleTemporaries) throws(FileError) -> URL {
        try state.withLock { state in
            Result { () throws(FileError) in
                if state.spoiled {
                    state.file?.discard()
                    state.file = nil
                    return
                }
                try write(&state, temporaries: temporaries)
                try state.file?.commit()
                state.file = nil
            }
        }.get()
        return folder
    }

    /// Removes the temporary, if any: the task failed. Blocking.
    func discard() {
        state.withLock { state in
            state.file?.discard()
            state.file = nil
            state.pending = []
        }
    }

    private func write(_ state: inout State, temporaries: StaleTemporaries) throws(FileError) {
        guard !state.spoiled else { return }
        if state.file == nil {
            try FileSystem.makeOwnFolder(folder.deletingLastPathComponent())
            try FileSystem.makeOwnFolder(folder)
            temporaries.sweep(folder)
            state.file = try AppendingTemporary(
                replacing: folder.appendingPathComponent(name), tag: temporaries.tag)
            let header =
                StateDocument.bytes([("run", .string(run)), ("task", .string(task))]) + [0x0A]
            state.pending = header + state.pending
        }
        guard !state.pending.isEmpty else { return }
        try state.file?.append(state.pending)
        state.pending = []
    }

    // MARK: - Reading

    /// The values `task` captured in `run`, capture by capture in the order they came; `nil`
    /// when no file of that run is kept (the task is then sent again).
    static func load(job: Job, task: String, run: String) -> [(capture: String, values: [String])]?
    {
        let folder = folder(outputDir: job.outputDir)
        let key = fileName(job: job.name, task: task)
        // The whole run's file first, then each shard's.
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
            .filter { $0.hasPrefix(key + ".shard-") && !$0.hasSuffix(".tmp") }.sorted()
        for name in [key] + names {
            if let values = load(folder.appendingPathComponent(name), task: task, run: run) {
                return values
            }
        }
        return nil
    }

    /// The text of the header's member `key`.
    private static func text(of key: String, in header: StateDocument.Members) -> String? {
        guard case .string(let text)? = header.first(where: { $0.key == key })?.node.value else {
            return nil
        }
        return text
    }

    /// The file's values, when its header names `run` and `task`.
    private static func load(_ url: URL, task: String, run: String)
        -> [(capture: String, values: [String])]?
    {
        guard let bytes = try? FileSystem.read(url) else { return nil }
        var lines = bytes.split(separator: 0x0A)
        // A header of a later format (or none) is no kept file: the task is sent again.
        guard !lines.isEmpty,
            case .success(let header) = StateDocument.members(
                of: Array(lines.removeFirst()), kind: "kept-captures file"),
            Self.text(of: "run", in: header) == run, Self.text(of: "task", in: header) == task
        else { return nil }
        var captures: [(capture: String, values: [String])] = []
        for line in lines {
            guard let node = try? JSONParser.parse(Array(line)), let name = node.string("capture"),
                case .array(let items)? = node.member("values")?.value
            else { return nil }
            var values: [String] = []
            for item in items {
                guard case .string(let value) = item.value else { return nil }
                values.append(value)
            }
            if let index = captures.firstIndex(where: { $0.capture == name }) {
                captures[index].values += values
            } else {
                captures.append((name, values))
            }
        }
        return captures
    }

    static func folder(outputDir: String) -> URL {
        URL(fileURLWithPath: outputDir).appendingPathComponent(".courier/captures")
    }

    /// The task's file: its key (``FNV1a/taskKey(job:task:)``) in hex; the header names the
    /// task, so two ids of one key are told apart.
    static func fileName(job: String, task: String) -> String {
        String(FNV1a.taskKey(job: job, task: task), radix: 16)
    }
}

extension JSONNode {
    /// The member `key` of an object, if this is one and has it.
    fileprivate func member(_ key: String) -> JSONNode? {
        guard case .object(let members) = value else { return nil }
        return members.first { $0.key == key }?.node
    }

    /// The string member `key`.
    fileprivate func string(_ key: String) -> String? {
        guard case .string(let text)? = member(key)?.value else { return nil }
        return text
    }
}
