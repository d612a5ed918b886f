/// A task id that would hold a secret: ids are the log's structure, written as they are (so
/// that a secret equal to an id's own text, `user` in `user-{n}`, leaves the log readable),
/// so a secret that a value puts in one (a `lines` file, a capture) must never make a task.
enum SecretInTaskID {
    /// The secrets (4 bytes or longer, as the log searches) that `id` holds and the spec's id
    /// template does not write itself.
    static func secrets(in id: String, spec: TaskSpec, job: Job) -> [String] {
        secrets(in: id, writtenBy: spec.compiled?.id ?? Template(spec.id), job: job)
    }

    /// The secrets (4 bytes or longer) that `value`, rendered from `template`, holds and the
    /// template's own text does not write: a task's id, a `save` path.
    static func secrets(in value: String, writtenBy template: Template, job: Job) -> [String] {
        // Every task of a job with secrets passes here: the value's own text is read only for
        // a value that holds one.
        let held = job.secrets.filter {
            $0.utf8.count >= Redactor.minimumLength && value.holdsBytes(of: $0)
        }
        guard !held.isEmpty else { return [] }
        let written = template.parts.compactMap {
            part -> String? in
            if case .text(let text) = part { return text }
            return nil
        }.joined()
        return held.filter { !written.holdsBytes(of: $0) }
    }

    /// Why a task with `id` is not made, when the id holds such a secret.
    static func problem(_ id: String, spec: TaskSpec, job: Job) -> String? {
        guard !job.secrets.isEmpty, !secrets(in: id, spec: spec, job: job).isEmpty else {
            return nil
        }
        return
            "the task's id would hold a secret (a value put it there): ids are written in logs as they are; build the id from another value"
    }

    /// `id` with each of those secrets written `<redacted>`: what a failure's line may say.
    static func redacted(_ id: String, spec: TaskSpec, job: Job) -> String {
        secrets(in: id, spec: spec, job: job).sorted { $0.utf8.count > $1.utf8.count }.reduce(id) {
            $0.replacingOccurrences(of: $1, with: Redactor.placeholder)
        }
    }
}
