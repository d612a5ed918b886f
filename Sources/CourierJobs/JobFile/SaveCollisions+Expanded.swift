import Foundation

extension SaveCollisions {
    /// The files two entries' `save` paths with variables both name once their values are in
    /// (trial JJJ: `a-{n}` and `b-{n}` both saved `o/{n}.json` over 1–3; `validate` said ok
    /// and a run lost every answer of `a`). Checked only where two entries or more save with
    /// variables, each path kept as a 64-bit fingerprint, then the fingerprints two entries
    /// share rendered again to name them; ranges too big to expand (`skipping`) and fan-outs
    /// over a capture (their values come as the run goes) are not judged.
    static func sharedByExpansion(_ job: Job, skipping: Set<String>) -> [JobFileError] {
        let specs = job.tasks.indices.filter { index in
            let spec = job.tasks[index]
            return spec.save.map { !Template($0).variables.isEmpty } == true
                && spec.captureSource == nil && !skipping.contains(spec.path)
        }
        guard specs.count >= 2 else { return [] }
        func paths(_ body: (String, Int, [String: String]) -> Bool) {
            for index in specs {
                let spec = job.tasks[index]
                let save = Template(spec.save ?? "")
                for bindings in IteratorSequence(CombinationIterator(spec.foreach, zip: spec.zip))
                where !body(RecordsRule.canonical(save.render(bindings)), index, bindings) {
                    return
                }
            }
        }
        var seen: [(fingerprint: UInt64, spec: Int)] = []
        paths { path, index, _ in
            seen.append((JobValidator.fingerprint(path), index))
            return true
        }
        seen.sort { ($0.fingerprint, $0.spec) < ($1.fingerprint, $1.spec) }
        var shared = Set<UInt64>()
        for index in seen.indices.dropFirst()
        where seen[index].fingerprint == seen[index - 1].fingerprint
            && seen[index].spec != seen[index - 1].spec
        {
            shared.insert(seen[index].fingerprint)
        }
        guard !shared.isEmpty else { return [] }
        var first: [String: (spec: Int, id: String)] = [:]
        var errors: [JobFileError] = []
        paths { path, index, bindings in
            guard shared.contains(JobValidator.fingerprint(path)) else { return true }
            let spec = job.tasks[index]
            let id = Template(spec.id).render(bindings)
            guard let earlier = first[path] else {
                first[path] = (index, id)
                return true
            }
            guard earlier.spec != index else { return true }
            let other = job.tasks[earlier.spec]
            errors.append(
                JobFileError(
                    file: job.file.relativePath, spec: spec, key: "save",
                    message:
                        "task \(id) saves \(path), as task \(earlier.id) of \(other.path) does: each run would put one answer over the other; give each entry its own files"
                ))
            return errors.count < 20
        }
        return errors
    }
}
