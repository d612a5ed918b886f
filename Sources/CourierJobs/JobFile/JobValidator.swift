import Foundation

/// The checks that need the whole expansion: every task builds, and ids are unique.
///
/// Runs in one streaming pass; ids are remembered as 64-bit fingerprints in one array, sorted
/// at the end, so a million tasks cost 8 MB rather than their strings (or a hash set's 34 MB of
/// 128-bit ones). Fingerprints that meet are told apart by a second pass that compares those
/// ids themselves, so a collision never reports a duplicate that is not one.
enum JobValidator {
    /// How many tasks the job expands to, not counting those that fan out over a capture
    /// (their number is known only as the run goes).
    static func validate(_ job: Job) throws(JobFileErrors) -> Int {
        try validate(job, limit: oneByOneLimit)
    }

    /// ``validate(_:)`` with another limit on the ids compared one by one, or another
    /// fingerprint (tests: one that makes every id meet every other).
    static func validate(
        _ job: Job, limit: Int, fingerprint: (String) -> UInt64 = fingerprint
    ) throws(JobFileErrors) -> Int {
        var errors = zipLengthErrors(job) + SaveCollisions.errors(in: job)
        var count = 0
        // Big products of ranges whose ids are provably unique are checked at their corners.
        var provable: Set<String> = []
        for spec in job.tasks {
            guard let tasks = StaticValidation.provableCount(of: spec, in: job) else { continue }
            provable.insert(spec.path)
            count += tasks
            for bindings in StaticValidation.corners(of: spec) {
                if case .failure(let error) = TaskBuilder.check(spec, bindings: bindings, job: job)
                {
                    errors.append(error)
                }
            }
        }
        // What cannot be proven is checked task by task, each id kept as a fingerprint; a
        // job too big for that is refused up front rather than checked for hours.
        let (expanded, largest) = oneByOneCount(job, skipping: provable, limit: limit)
        if expanded > limit, let largest {
            // Errors found so far (zipped lengths that differ) say what to mend first.
            if errors.isEmpty {
                errors.append(
                    JobFileError(
                        file: job.file.relativePath, path: "\(largest.path).id",
                        message: """
                            expands to \(expansionCount(largest, limit: limit)) tasks, and \
                            validation checks at most \(limit) task ids one by one (the job's \
                            other tasks included, a task over one lines file excepted); ids are \
                            proven unique without expanding only for ranges whose id uses every \
                            variable with a character other than a digit or "-" between two \
                            variables (such as "item-{a}/{b}"): give the id that form, or split \
                            the job into several files
                            """))
            }
            throw JobFileErrors(errors: errors).scrubbed(with: Redactor(secrets: job.secrets))
        }
        errors += SaveCollisions.sharedByExpansion(job, skipping: provable)
        var stopped = false
        let met = repeatedFingerprints(
            job, skipping: provable, expanded: expanded, fingerprint: fingerprint,
            errors: &errors, count: &count, stopped: &stopped)
        if !met.isEmpty, !stopped {
            stopped = duplicateIDs(
                job, skipping: provable, among: met, fingerprint: fingerprint, errors: &errors)
        }
        if stopped {
            errors.append(
                JobFileError(
                    file: job.file.relativePath, path: "", message: "stopping after 20 errors"))
        }
        if !errors.isEmpty {
            throw JobFileErrors(errors: errors).scrubbed(with: Redactor(secrets: job.secrets))
        }
        return count
    }

    /// Zipped variables must have as many values each.
    private static func zipLengthErrors(_ job: Job) -> [JobFileError] {
        var errors: [JobFileError] = []
        for spec in job.tasks where spec.zip {
            let counts = spec.foreach.map { variable in
                (variable.name, StaticValidation.valueCount(of: variable.source))
            }
            if let first = counts.first, let other = counts.first(where: { $0.1 != first.1 }) {
                errors.append(
                    JobFileError(
                        file: job.file.relativePath, path: "\(spec.path).foreach",
                        message:
                            "zip pairs values up, but \(first.0) has \(first.1) and \(other.0) has \(other.1)"
                    ))
            }
        }
        return errors
    }

    /// Checks every task that cannot be proven (adding to `errors` and `count`), each id kept
    /// as a fingerprint; the fingerprints that met. `stopped` at 20 errors.
    private static func repeatedFingerprints(
        _ job: Job, skipping provable: Set<String>, expanded: Int,
        fingerprint: (String) -> UInt64, errors: inout [JobFileError], count: inout Int,
        stopped: inout Bool
    ) -> Set<UInt64> {
        // Tasks over a lines file are not in `expanded`: counted here, so the array is made
        // once at its size rather than doubled (and copied) as it grows.
        let lines = job.tasks.lazy.filter {
            !provable.contains($0.path) && $0.captureSource == nil
                && StaticValidation.followsOneFile($0)
        }.reduce(0) { $0 + StaticValidation.expansionCount(of: $1, cap: 100_000_000) }
        var fingerprints: [UInt64] = []
        fingerprints.reserveCapacity(min(expanded + lines, 100_000_000))
        // A save with variables is weighed against the job's literal files task by task;
        // most jobs have none, and pay nothing.
        let literals = SaveCollisions.Literals(job.tasks)
        for (spec, bindings, result) in checks(job, skipping: provable) {
            switch result {
            case .failure(var error):
                // Placed at the task's entry: the value came from an expansion of it.
                if error.line == nil, let position = spec.position {
                    (error.line, error.column) = (position.line, position.column)
                }
                errors.append(error)
            case .success(let id):
                count += 1
                fingerprints.append(fingerprint(id))
                if !literals.isEmpty, let save = spec.save, !Template(save).variables.isEmpty,
                    let message = literals.clash(
                        RecordsRule.canonical(Template(save).render(bindings)), of: spec)
                {
                    errors.append(
                        JobFileError(
                            file: job.file.relativePath, spec: spec, key: "save",
                            message: "task \(id) \(message)"))
                }
            }
            if errors.count >= 20 {
                stopped = true
                break
            }
        }
        fingerprints.sort()
        var met = Set<UInt64>()
        for index in fingerprints.indices.dropFirst()
        where fingerprints[index] == fingerprints[index - 1] {
            met.insert(fingerprints[index])
        }
        return met
    }

    /// The ids behind the fingerprints that met, compared as text, in expansion order: one
    /// error per repeated id, naming how many tasks make it and the values of the first two;
    /// whether it stopped at 20 errors.
    private static func duplicateIDs(
        _ job: Job, skipping provable: Set<String>, among met: Set<UInt64>,
        fingerprint: (String) -> UInt64, errors: inout [JobFileError]
    ) -> Bool {
        var seen: [String: DuplicateID] = [:]
        var order: [String] = []
        for (spec, bindings, result) in checks(job, skipping: provable) {
            guard case .success(let id) = result, met.contains(fingerprint(id)) else { continue }
            let maker = "\(spec.path)\(describe(bindings))"
            if seen[id] == nil {
                seen[id] = DuplicateID(first: maker)
            } else {
                if seen[id]?.count == 1 { order.append(id) }
                seen[id]?.add(maker, spec: spec)
            }
        }
        for id in order {
            guard let duplicate = seen[id], let spec = duplicate.spec else { continue }
            // A window task's variables are its bounds, which it names itself (trial V).
            let hint =
                !TaskDecoder.unclosed(in: spec.id).isEmpty
                ? "its id opens a brace it does not close, so the variable is text (write it as \"\(TaskDecoder.closingBraces(in: spec.id))\")"
                : spec.window != nil
                    ? "put {windowStart} in the id" : "put the foreach variables in the id"
            errors.append(
                JobFileError(
                    file: job.file.relativePath, spec: spec, key: "id",
                    message: """
                        duplicate task id "\(id)" after expansion (ids must be unique): \
                        \(duplicate.count) tasks make it, first \(duplicate.first), \
                        then \(duplicate.second); \(hint)
                        """))
            if errors.count >= 20 { return true }
        }
        return false
    }

    /// The tasks that make one id, as the error names them.
    private struct DuplicateID {
        var first: String
        var second = ""
        /// The spec of the second task: where the error points.
        var spec: TaskSpec?
        var count = 1

        mutating func add(_ maker: String, spec: TaskSpec) {
            if count == 1 {
                second = maker
                self.spec = spec
            }
            count += 1
        }
    }

    /// A task's foreach values for a message: ` with n=1, m=2`, or nothing.
    private static func describe(_ bindings: [String: String]) -> String {
        guard !bindings.isEmpty else { return "" }
        let values = bindings.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.prefix(40))" }
        return " with " + values.joined(separator: ", ")
    }

    /// The most tasks validation checks one by one (about 30 bytes and 1.5 µs each in a
    /// release build): beyond it, a job that cannot be proven unique statically is refused.
    /// A task over one `lines` file (or zipped ones) is not counted: its size is the data the
    /// user gave, checked however big, as the hangs this limit stops come from products.
    static let oneByOneLimit = 10_000_000

    /// How many tasks the specs not in `skipping` expand to (saturating just past `limit`),
    /// and the biggest of those specs. Tasks over one `lines` file are left out.
    static func oneByOneCount(
        _ job: Job, skipping: Set<String>, limit: Int = oneByOneLimit
    ) -> (Int, TaskSpec?) {
        var total = 0
        var largest: (spec: TaskSpec, count: Int)?
        for spec in job.tasks
        where !skipping.contains(spec.path) && !StaticValidation.followsOneFile(spec) {
            let count = StaticValidation.expansionCount(of: spec, cap: limit + 1)
            total = min(total + count, limit + 1)
            if count > largest?.count ?? -1 { largest = (spec, count) }
        }
        return (total, largest?.spec)
    }

    /// A task's expansion as a figure for a message ("more than N" past the limit).
    private static func expansionCount(_ spec: TaskSpec, limit: Int) -> String {
        let count = StaticValidation.expansionCount(of: spec, cap: limit + 1)
        return count > limit ? "more than \(limit)" : "\(count)"
    }

    /// Every expansion of every spec, checked lazily (``TaskBuilder/check(_:bindings:job:)``).
    static func checks(_ job: Job, skipping: Set<String> = [])
        -> some Sequence<(TaskSpec, [String: String], Result<String, JobFileError>)>
    {
        // A task that fans out over a capture has no values before the run: it is checked as
        // each of its tasks is built.
        job.tasks.lazy.filter { !skipping.contains($0.path) && $0.captureSource == nil }.flatMap {
            spec in
            IteratorSequence(CombinationIterator(spec.foreach, zip: spec.zip)).lazy.map {
                bindings in
                (spec, bindings, TaskBuilder.check(spec, bindings: bindings, job: job))
            }
        }
    }

    /// A 64-bit fingerprint of a task id: FNV-1a over its bytes, then a finalizer that spreads
    /// every bit (ids differ in their last digits). Equal ids have equal fingerprints; the
    /// rare unequal ids that share one are told apart by the second pass.
    static func fingerprint(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        hash = (hash ^ (hash >> 30)) &* 0xbf58_476d_1ce4_e5b9
        hash = (hash ^ (hash >> 27)) &* 0x94d0_49bb_1331_11eb
        return hash ^ (hash >> 31)
    }
}
