import Foundation

/// The paths a task's values fill in under `outputDir`: its `save` and its `records.to`.
extension TaskBuilder {
    /// The rendered `save` path (`nil` without one), if it stays inside the output folder.
    static func savePath(
        _ template: Template?, bindings: [String: String], id: String, job: Job
    ) -> Result<String?, Problem> {
        renderedPath(
            template, key: "save", bindings: bindings, id: id, job: job,
            problem: OutputPath.problem)
    }

    /// A rendered path under `outputDir`, if `problem` finds none in it, and no secret of the
    /// job that a value put there: a file's name is written as it is (trial GG: a server
    /// that echoed the bearer token as an id named a saved file after it).
    private static func renderedPath(
        _ template: Template?, key: String, bindings: [String: String], id: String, job: Job,
        problem: (String) -> String?
    ) -> Result<String?, Problem> {
        guard let template else { return .success(nil) }
        let rendered = template.render(bindings)
        // The job's own files are under its output folder only with `"outputDir": "."` or
        // the like: most jobs make no canonical path a task for it.
        if let problem = problem(rendered)
            ?? (job.ownFiles.isEmpty
                ? nil : OwnFiles.problem(RecordsRule.canonical(rendered), own: job.ownFiles))
        {
            return .failure(Problem(key: key, message: "\(problem) (task \(id))"))
        }
        if !job.secrets.isEmpty,
            !SecretInTaskID.secrets(in: rendered, writtenBy: template, job: job).isEmpty
        {
            return .failure(
                Problem(
                    key: key,
                    message:
                        "the path would hold a secret (a value put it there): file names are written as they are; build the path from another value (task \(id))"
                ))
        }
        return .success(rendered)
    }

    /// The rendered `records.to` path, canonical (``RecordsRule/canonical(_:)``; `nil` without
    /// one), if it stays inside the output folder and out of `.courier`.
    static func recordsPath(
        _ template: Template?, bindings: [String: String], id: String, job: Job
    ) -> Result<String?, Problem> {
        renderedPath(
            template, key: "records.to", bindings: bindings, id: id, job: job,
            problem: RecordsRule.problem
        ).map { $0.map(RecordsRule.canonical) }
    }
}
