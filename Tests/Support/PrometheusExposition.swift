import Foundation

/// A strict reader of Prometheus's text exposition format 0.0.4, written from the format's
/// specification for the tests (not from courier's writer): every line a HELP, a TYPE or a
/// sample; names and label names of the allowed characters; only the allowed escapes; each
/// family's lines together, its TYPE before its samples, no series twice; a histogram's buckets
/// cumulative, ending in `+Inf` equal to its `_count`; the text ending in a line break.
public struct PrometheusExposition: Sendable {
    public struct Sample: Sendable {
        public let name: String
        public let labels: [String: String]
        public let value: Double
    }

    public struct Family: Sendable {
        public let name: String
        public var type = "untyped"
        public var help: String?
        public var samples: [Sample] = []

        /// The value of the sample named `name` (the family's own by default) whose labels
        /// include `labels`.
        public func value(_ labels: [String: String] = [:], name: String? = nil) -> Double? {
            samples.first { sample in
                sample.name == (name ?? self.name)
                    && labels.allSatisfy { sample.labels[$0.key] == $0.value }
            }?.value
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let line: Int
        public let reason: String
        public var description: String { "line \(line): \(reason)" }
    }

    public private(set) var families: [String: Family] = [:]
    /// Family names in the order they appeared.
    public private(set) var order: [String] = []

    public subscript(_ name: String) -> Family? { families[name] }

    public static func parse(_ text: String) throws -> PrometheusExposition {
        var exposition = PrometheusExposition()
        guard text.hasSuffix("\n") else { throw Failure(line: 0, reason: "no final line break") }
        var current: String?
        var closed = Set<String>()
        var series = Set<String>()
        let lines = text.dropLast().split(separator: "\n", omittingEmptySubsequences: false)
        for (offset, raw) in lines.enumerated() {
            let number = offset + 1
            let line = String(raw)
            func fail(_ reason: String) -> Failure { Failure(line: number, reason: reason) }
            guard !line.isEmpty else { throw fail("an empty line") }
            if line.hasPrefix("#") {
                let parts = line.split(
                    separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
                guard parts.count >= 3, parts[0] == "#", parts[1] == "HELP" || parts[1] == "TYPE"
                else { continue }  // a comment
                let name = String(parts[2])
                guard isMetricName(name) else { throw fail("bad metric name \(name)") }
                if current != name {
                    if let current { closed.insert(current) }
                    guard !closed.contains(name) else { throw fail("\(name)'s lines are apart") }
                    current = name
                }
                var family = exposition.families[name] ?? Family(name: name)
                let rest = parts.count == 4 ? String(parts[3]) : ""
                if parts[1] == "HELP" {
                    guard family.help == nil else { throw fail("a second HELP for \(name)") }
                    family.help = try unescape(rest, quotes: false, at: number)
                } else {
                    guard family.samples.isEmpty else { throw fail("TYPE after samples") }
                    guard ["counter", "gauge", "histogram", "summary", "untyped"].contains(rest)
                    else { throw fail("bad type \(rest)") }
                    family.type = rest
                }
                if exposition.families[name] == nil { exposition.order.append(name) }
                exposition.families[name] = family
                continue
            }
            let sample = try parseSample(line, at: number)
            let owner = familyName(of: sample.name, current: current, in: exposition.families)
            if current != owner {
                if let current { closed.insert(current) }
                guard !closed.contains(owner) else { throw fail("\(owner)'s lines are apart") }
                current = owner
            }
            let key =
                sample.name + "|"
                + sample.labels.sorted { $0.key < $1.key }.map {
                    "\($0.key)=\($0.value)"
                }.joined(separator: ",")
            guard series.insert(key).inserted else { throw fail("a series twice: \(key)") }
            var family = exposition.families[owner] ?? Family(name: owner)
            if exposition.families[owner] == nil { exposition.order.append(owner) }
            family.samples.append(sample)
            exposition.families[owner] = family
        }
        for family in exposition.families.values where family.type == "histogram" {
            try checkHistogram(family)
        }
        return exposition
    }

    static func isMetricName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first,
            first == "_" || first == ":" || (first.isASCII && first.properties.isAlphabetic)
        else { return false }
        return name.unicodeScalars.allSatisfy {
            $0.isASCII
                && ($0 == "_" || $0 == ":" || $0.properties.isAlphabetic
                    || ("0"..."9").contains($0))
        }
    }

    static func isLabelName(_ name: String) -> Bool {
        !name.contains(":") && isMetricName(name)
    }

    /// The family a sample belongs to: a histogram's or summary's `_bucket`, `_sum`, `_count`
    /// go to the family without the suffix when it was declared so.
    static func familyName(of sample: String, current: String?, in families: [String: Family])
        -> String
    {
        for suffix in ["_bucket", "_sum", "_count"] where sample.hasSuffix(suffix) {
            let base = String(sample.dropLast(suffix.count))
            if let family = families[base], family.type == "histogram" || family.type == "summary" {
                return base
            }
        }
        return sample
    }

    static func parseSample(_ line: String, at number: Int) throws -> Sample {
        func fail(_ reason: String) -> Failure { Failure(line: number, reason: reason) }
        let scalars = Array(line.unicodeScalars)
        var index = 0
        var name = ""
        while index < scalars.count, scalars[index] != "{", scalars[index] != " " {
            name.unicodeScalars.append(scalars[index])
            index += 1
        }
        guard isMetricName(name) else { throw fail("bad sample name \(name)") }
        var labels: [String: String] = [:]
        if index < scalars.count, scalars[index] == "{" {
            index += 1
            while true {
                guard index < scalars.count else { throw fail("unterminated labels") }
                if scalars[index] == "}" {
                    index += 1
                    break
                }
                var label = ""
                while index < scalars.count, scalars[index] != "=" {
                    label.unicodeScalars.append(scalars[index])
                    index += 1
                }
                guard isLabelName(label) else { throw fail("bad label name \(label)") }
                guard index + 1 < scalars.count, scalars[index + 1] == "\"" else {
                    throw fail("label \(label) has no quoted value")
                }
                index += 2
                var value = ""
                while true {
                    guard index < scalars.count else { throw fail("unterminated label value") }
                    let scalar = scalars[index]
                    if scalar == "\"" { break }
                    if scalar == "\\" {
                        guard index + 1 < scalars.count else { throw fail("a lone backslash") }
                        switch scalars[index + 1] {
                        case "\\": value += "\\"
                        case "\"": value += "\""
                        case "n": value += "\n"
                        default: throw fail("bad escape in label \(label)")
                        }
                        index += 2
                        continue
                    }
                    value.unicodeScalars.append(scalar)
                    index += 1
                }
                index += 1
                guard labels[label] == nil else { throw fail("label \(label) twice") }
                labels[label] = value
                guard index < scalars.count else { throw fail("unterminated labels") }
                if scalars[index] == "," {
                    index += 1
                } else if scalars[index] != "}" {
                    throw fail("expected , or } after label \(label)")
                }
            }
        }
        guard index < scalars.count, scalars[index] == " " else { throw fail("no value") }
        let rest = String(String.UnicodeScalarView(scalars[(index + 1)...]))
        let fields = rest.split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 1 || fields.count == 2 else { throw fail("bad value part \(rest)") }
        guard let value = Self.number(String(fields[0])) else {
            throw fail("bad value \(fields[0])")
        }
        if fields.count == 2, Int64(fields[1]) == nil { throw fail("bad timestamp \(fields[1])") }
        return Sample(name: name, labels: labels, value: value)
    }

    /// Go's float syntax as Prometheus reads it: digits, a point, an exponent, or the words.
    public static func number(_ text: String) -> Double? {
        switch text {
        case "+Inf", "Inf": return .infinity
        case "-Inf": return -.infinity
        case "NaN": return .nan
        default:
            guard !text.isEmpty,
                text.unicodeScalars.allSatisfy({ "0123456789.eE+-".unicodeScalars.contains($0) })
            else { return nil }
            return Double(text)
        }
    }

    static func unescape(_ text: String, quotes: Bool, at number: Int) throws -> String {
        var result = ""
        var iterator = text.unicodeScalars.makeIterator()
        while let scalar = iterator.next() {
            guard scalar == "\\" else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch iterator.next() {
            case "\\": result += "\\"
            case "n": result += "\n"
            case "\"" where quotes: result += "\""
            default: throw Failure(line: number, reason: "bad escape in HELP")
            }
        }
        return result
    }

    static func checkHistogram(_ family: Family) throws {
        // Series by their labels other than le.
        var groups: [String: [(le: Double, count: Double)]] = [:]
        var counts: [String: Double] = [:]
        var sums = Set<String>()
        for sample in family.samples {
            let key = sample.labels.filter { $0.key != "le" }.sorted { $0.key < $1.key }.map {
                "\($0.key)=\($0.value)"
            }.joined(separator: ",")
            switch sample.name {
            case family.name + "_bucket":
                guard let text = sample.labels["le"], let le = number(text) else {
                    throw Failure(line: 0, reason: "\(family.name): a bucket without le")
                }
                groups[key, default: []].append((le, sample.value))
            case family.name + "_count": counts[key] = sample.value
            case family.name + "_sum": sums.insert(key)
            default:
                throw Failure(line: 0, reason: "\(family.name): stray sample \(sample.name)")
            }
        }
        for (key, buckets) in groups {
            guard buckets.map(\.le) == buckets.map(\.le).sorted(),
                Set(buckets.map(\.le)).count == buckets.count
            else { throw Failure(line: 0, reason: "\(family.name){\(key)}: le out of order") }
            guard buckets.map(\.count) == buckets.map(\.count).sorted() else {
                throw Failure(line: 0, reason: "\(family.name){\(key)}: buckets not cumulative")
            }
            guard buckets.last?.le == .infinity else {
                throw Failure(line: 0, reason: "\(family.name){\(key)}: no +Inf bucket")
            }
            guard counts[key] == buckets.last?.count, sums.contains(key) else {
                throw Failure(
                    line: 0, reason: "\(family.name){\(key)}: _count or _sum missing or wrong")
            }
        }
    }
}
