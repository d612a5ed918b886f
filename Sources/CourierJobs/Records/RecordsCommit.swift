import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Puts a run's records into their files, once every task has ended: for each file the run's
/// tasks write (``RecordsLedger``), the parts of the tasks that did it (this run's, and for
/// `--resume` and `replay --job` those its history left, ``Earlier``) are combined with the
/// file by its `write`, into a new file that replaces it by rename, and then removed.
///
/// The file is never written in place. A commit goes:
/// 1. the new file, whole, in a temporary beside the target (``FileReplacement``);
/// 2. `.courier/records/ID/commit`, written atomically: the target, the new file's device,
///    inode and size, the runs whose parts it holds, and the parts it makes spent;
/// 3. the temporary `fsync`ed and renamed over the target, the folder `fsync`ed;
/// 4. those parts removed, then the `commit` record.
///
/// A run killed between 3 and 4 leaves parts that the file already holds. The next commit of
/// that file finds the record first: when the target is the file the record names, the parts
/// it names are removed (they are in the file, or stale); otherwise the rename never
/// happened, and the parts are still wanted. So `append` never adds a part twice.
struct RecordsCommit: Sendable {
    let store: RecordsStore
    let run: String
    let history: Earlier?
    let temporaries: StaleTemporaries
    let limits: RecordsMerge.Limits
    /// Where no records file may land (``OwnPlaces``); `nil`: anywhere in `outputDir`.
    var own: OwnPlaces? = nil
    /// Told of an interrupted commit finished.
    let note: @Sendable (String) -> Void

    /// The runs whose parts a `--resume` or `replay --job` takes (the job's history, from its
    /// logs): their ids, earliest first, and the keys of the tasks they did.
    struct Earlier: Sendable {
        var runs: [String]
        var done: Set<UInt64>
    }

    /// One records file replaced.
    struct Committed: Sendable {
        /// Its path, relative to `outputDir`.
        let target: String
        /// The tasks whose records it now holds (this run's and its history's), in the order
        /// they were combined.
        let tasks: [String]
        /// Records in the new file.
        let records: Int
        /// Whether its bytes changed: a file the run would write again as it was is left alone
        /// (``SameBytes``), and its CSV with it.
        var changed = true
    }

    /// What became of the run's records files.
    struct Outcome: Sendable {
        var committed: [Committed] = []
        /// Files left as they were because a task failed (their parts wait for `--resume`).
        var held: [String] = []
        /// `replace` files left as they were because a task's response was ignored.
        var keptAsIs: [String] = []
        /// Files that could not be written: the run fails.
        var failures: [String] = []
    }

    /// Commits every file of `ledger` that may change. Blocking: on a file-work thread.
    func commit(_ ledger: RecordsLedger) -> Outcome {
        var outcome = Outcome()
        let (targets, heldAll) = ledger.snapshot()
        for (path, target) in targets {
            if let reason = target.keptAsIs, heldAll == nil, target.held == nil {
                outcome.keptAsIs.append("\(path): \(reason)")
                continue
            }
            let folder = store.folder(for: path)
            guard FileManager.default.fileExists(atPath: folder.path) else { continue }
            finishEarlierCommit(in: folder, target: path)
            if let reason = heldAll ?? target.held {
                outcome.held.append("\(path): \(reason)")
                continue
            }
            if let failure = target.failure {
                outcome.failures.append("\(path): \(failure)")
                continue
            }
            do {
                if let committed = try commit(path, target, folder: folder) {
                    outcome.committed.append(committed)
                }
            } catch {
                outcome.failures.append("\(path): \(error.message)")
            }
        }
        return outcome
    }

    /// Why one file was not written.
    struct Problem: Error {
        let message: String
    }

    /// One part to combine.
    private struct Part {
        let name: String
        let task: String
    }

    /// Combines the file's parts with it; `nil` when there is nothing new for it.
    private func commit(_ path: String, _ target: RecordsLedger.Target, folder: URL)
        throws(Problem) -> Committed?
    {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        let parts = try chosenParts(names, in: folder, path: path, rule: target.rule)
        guard !parts.isEmpty else { return nil }
        try checkEveryPart(parts, of: target, folder: folder)
        let output = URL(fileURLWithPath: store.outputDir.path)
        guard let url = OutputPath.resolve(path, in: output) else {
            throw Problem(message: "escapes outputDir through a symbolic link; not written")
        }
        if let own, own.refuses(url) { throw Problem(message: "\(OwnPlaces.refusal); not written") }
        let replacement: FileReplacement
        let descriptor: Int32
        do {
            try FileSystem.makeFolders(url.deletingLastPathComponent())
            temporaries.sweep(url.deletingLastPathComponent())
            replacement = try FileReplacement(replacing: url, tag: temporaries.tag)
        } catch {
            throw Problem(message: "\(error)")
        }
        descriptor = open(replacement.temporary.path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else {
            let code = errno
            replacement.discard()
            throw Problem(
                message:
                    "\(FileError(path: replacement.temporaryPath.path, action: "open", code: code))"
            )
        }
        var identity = stat()
        let records: Int
        let unchanged: Bool
        do {
            records = try write(
                parts, of: path, target.rule, from: folder, into: descriptor, url: url)
            // The same bytes as the file: the record below names the file as it is, which
            // then holds the parts, and the file is not replaced.
            unchanged = SameBytes.file(descriptor, equalsFileAt: url.path)
            if !unchanged || lstat(url.path, &identity) != 0 { fstat(descriptor, &identity) }
            close(descriptor)
        } catch {
            close(descriptor)
            replacement.discard()
            throw error
        }
        let runs = Set(parts.compactMap { RecordsStore.parsePartName($0.name)?.run }).sorted()
        let spent = spentParts(names, combined: parts)
        let record = StateDocument.bytes([
            ("target", .string(path)), ("run", .string(run)),
            ("runs", .array(runs.map { .string($0) })),
            ("parts", .array(spent.map { .string($0) })),
            ("device", .int(Int(truncatingIfNeeded: identity.st_dev))),
            ("inode", .int(Int(truncatingIfNeeded: identity.st_ino))),
            ("size", .int(Int(identity.st_size))),
        ])
        let commitFile = folder.appendingPathComponent(RecordsStore.commitName)
        do {
            try OutputFile.write(
                Data(record), to: commitFile, tag: temporaries.tag)
        } catch {
            replacement.discard()
            throw Problem(message: "\(error)")
        }
        do {
            if unchanged { replacement.discard() } else { try replacement.commit() }
        } catch {
            unlink(commitFile.path)
            throw Problem(message: "\(error)")
        }
        removeParts(in: folder, names: spent)
        unlink(commitFile.path)
        FolderSyncs.fsyncFolder(folder.path)
        rmdir(folder.path)
        return Committed(
            target: path, tasks: parts.map(\.task), records: records, changed: !unchanged)
    }

    /// The parts the new file makes spent: those combined, every part of this run and of the
    /// runs it completes, and another run's part of a task whose records this file now holds
    /// afresh. Any other run's part stays: a backfill that failed holds its windows' records
    /// for its `--resume`, and a night's run between the two must not remove them (trial LL:
    /// it did, and the resume then sent the failed window alone and called the file whole).
    private func spentParts(_ names: [String], combined parts: [Part]) -> [String] {
        let covered = Set(parts.compactMap { RecordsStore.parsePartName($0.name)?.key })
        let completed = Set(history?.runs ?? []).union([run])
        return names.filter { name in
            guard let (key, partRun) = RecordsStore.parsePartName(name) else { return false }
            return completed.contains(partRun) || covered.contains(key)
        }.sorted()
    }

    /// `replace` makes the file of every done task's part: a resume whose history's parts are
    /// gone (an earlier commit took them) cannot make it whole.
    private func checkEveryPart(
        _ parts: [Part], of target: RecordsLedger.Target, folder: URL
    ) throws(Problem) {
        guard target.rule.write == .replace else { return }
        let missing = target.doneWriters.subtracting(
            parts.compactMap { RecordsStore.parsePartName($0.name)?.key })
        guard missing.isEmpty else {
            throw Problem(
                message:
                    "\(missing.count) task\(missing.count == 1 ? "" : "s") done by earlier runs left no records in \(folder.path) (written by an earlier commit, or removed), and replace needs every task's; the file is left as it is: run the job again without --resume"
            )
        }
    }

    /// The part of each task to combine, in the tasks' natural order: this run's own, else the
    /// latest that a run of the history left for a task it did. A part written for another
    /// file or under other settings (the job changed since) is left out.
    private func chosenParts(_ names: [String], in folder: URL, path: String, rule: RecordsRule)
        throws(Problem) -> [Part]
    {
        let historyRank = Dictionary(
            (history?.runs ?? []).enumerated().map { ($1, $0) }, uniquingKeysWith: max)
        var chosen: [UInt64: (name: String, rank: Int)] = [:]
        for name in names {
            guard let (key, partRun) = RecordsStore.parsePartName(name) else { continue }
            let rank: Int
            if partRun == run {
                rank = Int.max
            } else if let history, let found = historyRank[partRun], history.done.contains(key) {
                rank = found
            } else {
                continue
            }
            if let earlier = chosen[key], earlier.rank >= rank { continue }
            chosen[key] = (name, rank)
        }
        var parts: [Part] = []
        for (name, _) in chosen.values {
            let file = folder.appendingPathComponent(name)
            let descriptor = open(file.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            guard descriptor >= 0 else {
                throw Problem(message: "\(FileError(path: file.path, action: "read", code: errno))")
            }
            defer { close(descriptor) }
            let input = LineInput(descriptor: descriptor, path: file.path, bufferSize: 4096)
            let first: UnsafeRawBufferPointer?
            do { first = try input.next() } catch { throw Problem(message: "\(error)") }
            guard let first, let header = RecordsStore.Header(first), header.target == path,
                header.settings == rule.settings
            else { continue }
            parts.append(Part(name: name, task: header.task))
        }
        parts.sort { NaturalOrder.less($0.task, $1.task) }
        return parts
    }

    /// Writes the new file into `descriptor` by the rule; returns its records.
    private func write(
        _ parts: [Part], of path: String, _ rule: RecordsRule, from folder: URL,
        into descriptor: Int32, url: URL
    ) throws(Problem) -> Int {
        let shown = (store.outputDir.path as NSString).appendingPathComponent(path)
        let existing = open(url.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        if existing < 0, errno != ENOENT {
            let reason =
                errno == ELOOP
                ? "is a symbolic link; courier replaces records files, and will not follow one"
                : "cannot be read (\(String(cString: strerror(errno))))"
            throw Problem(message: "\(reason); left as it is")
        }
        defer { if existing >= 0 { close(existing) } }
        if existing >= 0 {
            var status = stat()
            if fstat(existing, &status) == 0, status.st_mode & S_IFMT != S_IFREG {
                throw Problem(message: "is not a regular file; left as it is")
            }
        }
        switch rule.write {
        case .append, .replace:
            let output = LineOutput(descriptor: descriptor, path: shown)
            var lines = 0
            do {
                if rule.write == .append, existing >= 0 {
                    lines += try copy(existing, into: output)
                }
                for part in parts {
                    try each(part, in: folder) { (line) throws(FileError) in
                        try output.writeLine(line)
                        lines += 1
                    }
                }
                try output.flush()
            } catch {
                throw Problem(message: "\(error)")
            }
            return lines
        case .merge:
            do {
                let summary = try RecordsMerge.merge(
                    existing: existing >= 0 ? existing : nil, path: shown,
                    pointer: rule.key ?? "", into: descriptor, limits: limits,
                    makeScratch: { () throws(FileError) in try ScratchFile.make(in: folder) }
                ) { (merge) throws(RecordsMerge.Failure) in
                    try feed(parts, from: folder, into: merge)
                }
                return summary.written
            } catch {
                throw Problem(message: "\(error)")
            }
        }
    }

    /// Adds every line of `parts` to `merge`, in order.
    private func feed(_ parts: [Part], from folder: URL, into merge: RecordsMerge)
        throws(RecordsMerge.Failure)
    {
        for part in parts {
            let path = folder.appendingPathComponent(part.name).path
            let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            guard descriptor >= 0 else {
                throw .file(FileError(path: path, action: "read", code: errno))
            }
            defer { close(descriptor) }
            let input = LineInput(descriptor: descriptor, path: path)
            do {
                _ = try input.next()
                while let line = try input.next() { try merge.add(line) }
            } catch let error as FileError {
                throw .file(error)
            } catch let error as RecordsMerge.Failure {
                throw error
            } catch {
                throw .malformed("\(error)")
            }
        }
    }

    /// Calls `body` with each part line of `part` (its header skipped).
    private func each(
        _ part: Part, in folder: URL, _ body: (UnsafeRawBufferPointer) throws(FileError) -> Void
    ) throws(FileError) {
        let path = folder.appendingPathComponent(part.name).path
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { throw FileError(path: path, action: "read", code: errno) }
        defer { close(descriptor) }
        let input = LineInput(descriptor: descriptor, path: path)
        _ = try input.next()
        while let line = try input.next() { try body(line) }
    }

    /// Copies the existing file's lines (an `append`), ending its last line if it was not.
    private func copy(_ descriptor: Int32, into output: LineOutput) throws(FileError) -> Int {
        let input = LineInput(descriptor: descriptor, path: output.path)
        var lines = 0
        while let line = try input.next() {
            try output.writeLine(line)
            lines += 1
        }
        return lines
    }
}
