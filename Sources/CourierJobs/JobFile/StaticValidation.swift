/// When a task spec can be validated without expanding it: a big product of `range`s whose
/// ids are provably unique. A job of 10^9 tasks then validates at once instead of never.
///
/// The proof: range values are decimal integers (digits and `-`), distinct for distinct
/// numbers. If the id template uses every variable, and between two variables there is literal
/// text with a character that is neither a digit nor `-`, every combination renders a
/// different id. Nothing a range value can hold can break a URL path (it is percent-encoded),
/// put CR/LF in a header, or make a `save` path climb out, so checking the first and the last
/// combination covers the rest. Across specs, ids stay apart when the big spec's id starts
/// with literal text that no other spec's id literal starts with, or the other way round.
enum StaticValidation {
    /// Specs with at most this many tasks are expanded and checked one by one. A path joined
    /// to the base URL cannot be made invalid by digits, so path specs are proven from a
    /// smaller size; a full `url` template goes through Foundation's parser, whose corner
    /// cases make the bar higher.
    static let expansionLimit = 1_000_000
    static let pathExpansionLimit = 1_000

    /// The number of tasks of `spec` when it qualifies, `nil` when it must be expanded.
    ///
    /// Zipped ranges qualify too: their i-th combination is the i-th value of each, so an id
    /// that uses any one of them (separated as above) differs for every i. Zipped ranges of
    /// different lengths are the validator's error, not a proof.
    static func provableCount(of spec: TaskSpec, in job: Job) -> Int? {
        var count = 1
        var names: [String] = []
        for variable in spec.foreach {
            guard case .range = variable.source else { return nil }
            // The decoder refused ranges whose size overflows; a product may still.
            let values = valueCount(of: variable.source)
            if spec.zip {
                guard names.isEmpty || values == count else { return nil }
                count = values
            } else {
                let (product, overflow) = count.multipliedReportingOverflow(by: values)
                guard !overflow else { return nil }
                count = product
            }
            names.append(variable.name)
        }
        let limit: Int
        if case .path = spec.target { limit = pathExpansionLimit } else { limit = expansionLimit }
        guard count > limit else { return nil }
        let template = Template(spec.id)
        let used = Set(template.variables)
        if spec.zip {
            guard !used.isEmpty, used.isSubset(of: names) else { return nil }
        } else {
            guard used == Set(names) else { return nil }
        }
        guard separated(template) else { return nil }
        guard case .text(let prefix)? = template.parts.first else {
            return job.tasks.count == 1 ? count : nil
        }
        for other in job.tasks where other.path != spec.path {
            let otherPrefix: String
            if case .text(let text)? = Template(other.id).parts.first {
                otherPrefix = text
            } else {
                otherPrefix = ""
            }
            if otherPrefix.hasPrefix(prefix) || prefix.hasPrefix(otherPrefix) { return nil }
        }
        return count
    }

    /// Whether every two variables have a non-digit, non-`-` character between them.
    static func separated(_ template: Template) -> Bool {
        var sawVariable = false
        var separatedSinceVariable = true
        for part in template.parts {
            switch part {
            case .variable, .raw:
                if sawVariable, !separatedSinceVariable { return false }
                sawVariable = true
                separatedSinceVariable = false
            case .text(let text):
                if text.unicodeScalars.contains(where: { !("0"..."9").contains($0) && $0 != "-" }) {
                    separatedSinceVariable = true
                }
            }
        }
        return true
    }

    /// How many values a `foreach` source holds; a `lines` file is read to count them, up to
    /// `cap` (a file of more lines says `cap`). Ranges saturate at `Int.max`.
    static func valueCount(of source: ForeachSource, cap: Int = .max) -> Int {
        switch source {
        case .range(let from, let to):
            guard from <= to else { return 0 }
            let (span, overflow) = to.subtractingReportingOverflow(from)
            return overflow || span == .max ? .max : span + 1
        case .list(let values):
            return values.count
        case .lines:
            var values = ForeachValues(source)
            var count = 0
            while count < cap, values.next() != nil { count += 1 }
            return count
        case .capture:
            return 0
        }
    }

    /// Whether `spec` takes its values from one `lines` file (or zipped `lines` files): one
    /// task per line, so its size is the data's, not a product that can explode.
    static func followsOneFile(_ spec: TaskSpec) -> Bool {
        guard !spec.foreach.isEmpty, spec.zip || spec.foreach.count == 1 else { return false }
        return spec.foreach.allSatisfy {
            if case .lines = $0.source { true } else { false }
        }
    }

    /// How many tasks `spec` expands to, saturating at `cap`: its values' product, or with
    /// `zip` the longest variable's count (different lengths are an error of their own).
    static func expansionCount(of spec: TaskSpec, cap: Int) -> Int {
        guard spec.captureSource == nil else { return 0 }
        let counts = spec.foreach.lazy.map { valueCount(of: $0.source, cap: cap) }
        if spec.zip { return min(counts.max() ?? 1, cap) }
        var count = 1
        for values in counts {
            let (product, overflow) = count.multipliedReportingOverflow(by: values)
            count = overflow ? cap : min(product, cap)
        }
        return min(count, cap)
    }

    /// The first and the last combination of a product of ranges (with `zip`, of the zipped
    /// ranges).
    static func corners(of spec: TaskSpec) -> [[String: String]] {
        var first: [String: String] = [:]
        var last: [String: String] = [:]
        for variable in spec.foreach {
            if case .range(let from, let to) = variable.source {
                first[variable.name] = String(from)
                last[variable.name] = String(to)
            }
        }
        return [first, last]
    }
}
