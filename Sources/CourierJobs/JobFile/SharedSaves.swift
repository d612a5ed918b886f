/// Files two tasks of a job would both write whole: a `save` path with no `{variables}`
/// that another task saves to, or that another task's records go to. Each run would put one
/// task's answer over the other's (trial FFF: `a` and `b` saved `x.txt`, the run said `2 ok`
/// and `b`'s body was gone; records appended nightly were lost under a save). Paths with
/// variables depend on values, and two tasks may rightly take disjoint ones (`{n}` over 1–3
/// and over 4–6): those are not judged here. Tasks sharing a records file is
/// ``RecordsRule/checkShared(_:context:)``'s to judge.
enum SharedSaves {
    static func check(_ tasks: [TaskSpec], context: DecodingContext) {
        var saved: [String: TaskSpec] = [:]
        var recorded: [String: TaskSpec] = [:]
        for spec in tasks {
            if let to = spec.records?.to, Template(to).variables.isEmpty {
                let path = RecordsRule.canonical(Template(to).render([:]))
                if recorded[path] == nil { recorded[path] = spec }
            }
        }
        for spec in tasks {
            guard let save = spec.save, Template(save).variables.isEmpty else { continue }
            let path = RecordsRule.canonical(Template(save).render([:]))
            if let earlier = saved[path] {
                context.error(
                    "\(spec.path).save",
                    "saves \(path), as \(earlier.path) (\(earlier.id)) does: each run would put one answer over the other; give each task its own file",
                    at: nil)
            } else if let records = recorded[path] {
                context.error(
                    "\(spec.path).save",
                    "saves \(path), where \(records.path) (\(records.id)) writes its records: the save would replace them; give each its own file",
                    at: nil)
            }
            if saved[path] == nil { saved[path] = spec }
        }
    }
}
