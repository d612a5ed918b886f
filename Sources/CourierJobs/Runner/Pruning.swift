import Courier
import Foundation

/// `prune`: after a run that fetched a fan-out task's parent listing and every child, the
/// saved files of that task whose item the listing no longer has (deleted upstream); or after
/// a run that walked a paginated task's every page, its saved pages past the last. They are
/// listed (`outputDir/.courier/pruned/RUN.list` and standard error), and with `"move"` moved
/// into `outputDir/.courier/pruned/RUN/`, never deleted.
///
/// Only a complete run decides: a run with a failed task, interrupted, sharded, resumed or a
/// replay saw part of the listing at most, and an item it did not see may well exist.
final class Pruning: Sendable {
    /// The `prune` specs by index.
    private let specs: [Int: PruneMode]
    /// The files the run's children of each spec saved or were to save.
    private let seen = Locked<[Int: Set<String>]>([:])

    init?(job: Job) {
        var specs: [Int: PruneMode] = [:]
        for (index, spec) in job.tasks.enumerated() {
            if let mode = spec.prune { specs[index] = mode }
        }
        guard !specs.isEmpty else { return nil }
        self.specs = specs
    }

    /// Notes a task of a `prune` spec that ran `pages` pages: its file (a fan-out child's), or
    /// each page's (a paginated task's), is one the listing still has.
    func ran(_ task: ExpandedTask, pages: Int) {
        guard let index = task.specIndex, specs[index] != nil, let save = task.save else { return }
        let files =
            task.paginate == nil
            ? [save]
            : (1...max(1, pages)).compactMap { task.savePath(page: $0) }
        seen.withLock { $0[index, default: []].formUnion(files) }
    }

    /// Lists (and moves) the gone items' files of every `prune` spec; what was done, in words.
    func prune(job: Job, run: String, console: Console) {
        let seen = seen.withLock { $0 }
        let output = URL(fileURLWithPath: job.outputDir)
        let aside = output.appendingPathComponent(".courier/pruned")
        var lines: [String] = []
        for (index, mode) in specs.sorted(by: { $0.key < $1.key }) {
            let spec = job.tasks[index]
            guard let save = spec.save, let kept = seen[index], !kept.isEmpty else { continue }
            let gone = SavedFiles.matching(Template(save), under: output).filter {
                !kept.contains($0)
            }
            for path in gone {
                var line = path
                if mode == .move {
                    let target = aside.appendingPathComponent(run).appendingPathComponent(path)
                    do {
                        try FileSystem.makeFolders(target.deletingLastPathComponent())
                        try FileManager.default.moveItem(
                            at: output.appendingPathComponent(path), to: target)
                        line += " -> .courier/pruned/\(run)/\(path)"
                    } catch {
                        console.error("courier: prune: cannot move \(path) aside: \(error)")
                        continue
                    }
                }
                lines.append(line)
                if lines.count <= 20 {
                    console.error(
                        "courier: prune: \(job.outputDir)/\(line) (\(spec.path)): \(spec.paginate == nil ? "its item is no longer listed" : "a page past the listing's end")"
                    )
                }
            }
        }
        guard !lines.isEmpty else { return }
        let list = aside.appendingPathComponent("\(run).list")
        do {
            try FileSystem.makeFolders(aside)
            try OutputFile.write(
                Data((lines.joined(separator: "\n") + "\n").utf8), to: list, tag: nil)
        } catch {
            console.error("courier: prune: cannot write \(list.relativePath): \(error)")
        }
        console.error(
            "courier: prune: \(lines.count) saved file\(lines.count == 1 ? "" : "s") of items no longer listed or pages past a listing's end; the list is in \(job.outputDir)/.courier/pruned/\(run).list"
        )
    }
}

/// The files under a folder that a `save` template could have written.
enum SavedFiles {
    /// The paths (relative to `folder`) of the regular files that `template` matches, each
    /// `{variable}` standing for one or more characters of one path segment (`{page}` for a
    /// page number: digits, the first not 0). Hidden files
    /// (a save's temporaries) match only a segment that starts with a literal dot.
    static func matching(_ template: Template, under folder: URL, limit: Int = 10_000_000)
        -> [String]
    {
        var segments: [[Template.Part]] = [[]]
        for part in template.parts {
            guard case .text(let text) = part else {
                segments[segments.count - 1].append(part)
                continue
            }
            let pieces = text.split(separator: "/", omittingEmptySubsequences: false)
            for (offset, piece) in pieces.enumerated() {
                if offset > 0 { segments.append([]) }
                if !piece.isEmpty { segments[segments.count - 1].append(.text(String(piece))) }
            }
        }
        var found: [String] = []
        func walk(_ relative: String, _ depth: Int) {
            guard found.count < limit else { return }
            let here = relative.isEmpty ? folder : folder.appendingPathComponent(relative)
            let segment = segments[depth]
            let last = depth == segments.count - 1
            let names: [String]
            if segment.allSatisfy({ if case .text = $0 { true } else { false } }) {
                names = [segment.map { if case .text(let t) = $0 { t } else { "" } }.joined()]
            } else {
                names = (try? FileManager.default.contentsOfDirectory(atPath: here.path)) ?? []
            }
            for name in names.sorted() where matches(name, segment) {
                let path = relative.isEmpty ? name : relative + "/" + name
                var isFolder: ObjCBool = false
                let url = folder.appendingPathComponent(path)
                guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder)
                else { continue }
                if last {
                    if !isFolder.boolValue, FileSystem.notRegularFile(url) == nil {
                        found.append(path)
                    }
                } else if isFolder.boolValue {
                    walk(path, depth + 1)
                }
            }
        }
        walk("", 0)
        return found
    }

    /// Whether `name` is what `segment` (texts and variables) could render.
    static func matches(_ name: String, _ segment: [Template.Part]) -> Bool {
        if name.hasPrefix(".") {
            guard case .text(let first)? = segment.first, first.hasPrefix(".") else { return false }
        }
        let bytes = Array(name.utf8)
        func match(_ position: Int, _ part: Int) -> Bool {
            guard part < segment.count else { return position == bytes.count }
            switch segment[part] {
            case .text(let text):
                let literal = Array(text.utf8)
                guard bytes.count - position >= literal.count,
                    Array(bytes[position..<position + literal.count]) == literal
                else { return false }
                return match(position + literal.count, part + 1)
            case .variable, .raw:
                // `{page}` is only ever a page number (trial L: `pages/index.json` was listed
                // as a page past the listing's end, and `"move"` would have moved it).
                let pageOnly: Bool
                if case .variable("page") = segment[part] {
                    pageOnly = true
                } else {
                    pageOnly = false
                }
                var end = position + 1
                while end <= bytes.count {
                    if pageOnly,
                        !(0x30...0x39).contains(bytes[end - 1])
                            || (end - 1 == position && bytes[position] == 0x30)
                    {
                        return false
                    }
                    if match(end, part + 1) { return true }
                    end += 1
                }
                return false
            }
        }
        return match(0, 0)
    }
}
