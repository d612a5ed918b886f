import Foundation

/// The `save` paths that several tasks of one entry would share: every page of a paginated
/// task without `{page}` in its path, or every task of a `foreach` whose path leaves out a
/// variable that changes. Each save would silently overwrite the one before, so the job is
/// refused before it runs.
enum SaveCollisions {
    /// One error per entry whose saves would meet.
    static func errors(in job: Job) -> [JobFileError] {
        job.tasks.compactMap { spec in
            guard let save = spec.save, let message = problem(of: spec, save: save) else {
                return nil
            }
            return JobFileError(
                file: job.file.relativePath, spec: spec, key: "save", message: message)
        }
    }

    /// Why the entry's tasks or pages would save to one file, or `nil`.
    static func problem(of spec: TaskSpec, save: String) -> String? {
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
