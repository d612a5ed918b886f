import Foundation

/// The `save` paths that several tasks of one entry would share: every page of a paginated
/// task without `{page}` in its path, or every task of a `foreach` whose path leaves out a
/// variable that changes. Each save would silently overwrite the one before, so the job is
/// refused before it runs.
enum SaveCollisions {
    /// One error per entry whose saves would meet, and one per entry that would save a file
    /// another entry saves or writes its records to.
    static func errors(in job: Job) -> [JobFileError] {
        let own = job.tasks.compactMap { spec -> JobFileError? in
            guard let save = spec.save, let message = problem(of: spec, save: save) else {
                return nil
            }
            return JobFileError(
                file: job.file.relativePath, spec: spec, key: "save", message: message)
        }
        return own
            + (shared(job.tasks) + sharedByCapture(job.tasks)).map {
                JobFileError(
                    file: job.file.relativePath, spec: $0.spec, key: "save", message: $0.message)
            }
    }

    /// The files the job names with no `{variables}`: the literal `save` paths and records
    /// files, by canonical path, with the first entry that names each. Another entry's file
    /// that is one of them, or a folder of one, or inside one, would take its place, or never
    /// be saved (trials FFF, III: `a` and `b` saved `x.txt`, the run said `2 ok` and `b`'s
    /// body was gone; a save over records appended nightly lost them; `b-{n}` saved `f1.json`
    /// as `c` did; `a/x.txt` beside `a` failed every night).
    struct Literals {
        private(set) var saved: [String: TaskSpec] = [:]
        private(set) var recorded: [String: TaskSpec] = [:]
        var isEmpty: Bool { saved.isEmpty && recorded.isEmpty }

        /// Every entry's literal records file, and (`saves`) its literal save path.
        init(_ tasks: [TaskSpec], saves: Bool = true) {
            for spec in tasks {
                if let path = Self.literal(spec.records?.to), recorded[path] == nil {
                    recorded[path] = spec
                }
                if saves { add(save: spec) }
            }
        }

        /// The entry's literal save path, unless an earlier entry named that file first.
        mutating func add(save spec: TaskSpec) {
            if let path = Self.literal(spec.save), saved[path] == nil { saved[path] = spec }
        }

        static func literal(_ text: String?) -> String? {
            guard let text, Template(text).variables.isEmpty else { return nil }
            return RecordsRule.canonical(Template(text).render([:]))
        }

        /// Why `spec` may not save `path` (canonical): the file is another entry's, or a
        /// folder of one, or one is a folder of it; `nil` when it is its own.
        func clash(_ path: String, of spec: TaskSpec) -> String? {
            func other(_ found: TaskSpec?) -> TaskSpec? {
                found.flatMap { $0.path == spec.path ? nil : $0 }
            }
            if let earlier = other(saved[path]) {
                return
                    "saves \(path), as \(earlier.path) (\(earlier.id)) does: each run would put one answer over the other; give each task its own file"
            }
            if let records = other(recorded[path]) {
                return
                    "saves \(path), where \(records.path) (\(records.id)) writes its records: the save would replace them; give each its own file"
            }
            var folder = Substring(path)
            while let slash = folder.lastIndex(of: "/") {
                folder = folder[..<slash]
                if let file = other(saved[String(folder)]) {
                    return
                        "saves \(path), inside \(folder), which \(file.path) (\(file.id)) saves as a file: one of them could never be saved; give each its own place"
                }
            }
            let inside = path + "/"
            if let (_, file) = saved.first(where: {
                $0.key.hasPrefix(inside) && other($0.value) != nil
            }) {
                return
                    "saves \(path), a folder of what \(file.path) (\(file.id)) saves: one of them could never be saved; give each its own place"
            }
            return nil
        }
    }

    /// The entries whose literal `save` clashes with an earlier entry's literal file
    /// (``Literals``). Paths with variables are judged task by task as the job is validated
    /// (``JobValidator``): two entries may rightly take disjoint values (`{n}` over 1–3 and
    /// over 4–6). Entries sharing a records file are ``RecordsRule``'s to judge.
    static func shared(_ tasks: [TaskSpec]) -> [(spec: TaskSpec, message: String)] {
        // Against the entries before it for saves (one error a pair), every entry's records.
        var literals = Literals(tasks, saves: false)
        var found: [(spec: TaskSpec, message: String)] = []
        for spec in tasks {
            if let path = Literals.literal(spec.save), let message = literals.clash(path, of: spec)
            {
                found.append((spec, message))
            }
            literals.add(save: spec)
        }
        return found
    }

    /// The entries whose `save` names, for the same captured values, the same files as an
    /// earlier entry's: their variables all take captures (fan-outs, `{name}` inputs), and
    /// with each fan-out variable read as the capture it takes the two paths are one (trial
    /// LLL: `a-{i}` and `b-{j}` over the capture `ids` both saved `o/{…}.json`, and a run lost
    /// `a`'s answers). Values known only as the run goes are otherwise not judged here.
    static func sharedByCapture(_ tasks: [TaskSpec]) -> [(spec: TaskSpec, message: String)] {
        var seen: [String: TaskSpec] = [:]
        var found: [(spec: TaskSpec, message: String)] = []
        for spec in tasks {
            guard let save = spec.save else { continue }
            let variables = Template(save).variables
            var shape = save
            var captured = !variables.isEmpty
            for name in variables {
                if case .capture(let capture)? = spec.foreach.first(where: { $0.name == name })?
                    .source
                {
                    shape = shape.replacingOccurrences(of: "{\(name)}", with: "{@\(capture)}")
                } else if !spec.inputs.contains(name) {
                    captured = false
                }
            }
            guard captured else { continue }
            if let earlier = seen[shape] {
                found.append(
                    (
                        spec,
                        "saves \"\(save)\" over the values \(earlier.path) (\(earlier.id)) saves \"\(earlier.save ?? "")\" over: each value's file would be written by both, one answer over the other; give each entry its own files"
                    ))
            } else {
                seen[shape] = spec
            }
        }
        return found
    }

    /// Why the entry's tasks or pages would save to one file, or `nil`.
    static func problem(of spec: TaskSpec, save: String) -> String? {
        if !TaskDecoder.unclosed(in: save).isEmpty {
            // Not a missing variable: a brace left open (trial FFF was told to write
            // "o/{n-{n}.json").
            return
                "\"\(save)\" opens a brace it does not close, so its variable is text and every task would save to one file (write it as \"\(TaskDecoder.closingBraces(in: save))\")"
        }
        let used = Template(save).variables
        if spec.paginate != nil, !used.contains("page") {
            return """
                every page of a paginated task is saved, and "\(save)" has no {page}: each page \
                would overwrite the one before (write it as "\(example(save, with: "page"))", \
                or use "records" to gather every page's items into one file)
                """
        }
        let missing = spec.foreach.filter { variable in
            !used.contains(variable.name) && changes(variable.source)
        }.map(\.name)
        // Zipped variables move together: one of them in the path tells the tasks apart.
        let collides = spec.zip ? missing.count == spec.foreach.count : !missing.isEmpty
        guard collides, let name = missing.first else { return nil }
        let names = missing.map { "{\($0)}" }.joined(separator: ", ")
        return """
            "\(save)" leaves out \(names), so tasks with different values of \
            \(missing.count == 1 ? "it" : "them") save to the same file and each would \
            overwrite the one before (write it as "\(example(save, with: name))")
            """
    }

    /// Whether a variable takes more than one value: a capture's values are known only as
    /// the run goes, so it is taken to.
    private static func changes(_ source: ForeachSource) -> Bool {
        if case .capture = source { return true }
        return StaticValidation.valueCount(of: source, cap: 2) > 1
    }

    /// `save` with `{name}` added before its extension: `users.json` → `users-{page}.json`.
    private static func example(_ save: String, with name: String) -> String {
        let file = (save as NSString).lastPathComponent
        let folder = String(save.dropLast(file.utf8.count))
        guard let dot = file.lastIndex(of: "."), dot != file.startIndex else {
            return "\(save)-{\(name)}"
        }
        return "\(folder)\(file[..<dot])-{\(name)}\(file[dot...])"
    }
}
