import Courier
import Foundation

/// Prometheus's text exposition format, version 0.0.4, as node_exporter's textfile collector
/// reads it: per metric family a `# HELP` and a `# TYPE` line, then its samples, one a line,
/// `name{label="value",…} number`, the file ending in a line break.
///
/// Label values escape `\`, `"` and line breaks; HELP text escapes `\` and line breaks; numbers
/// are Go's float syntax (`+Inf`, `-Inf`, `NaN` spelled so).
struct PrometheusText {
    enum MetricType: String {
        case gauge, counter, histogram
    }

    private(set) var text = ""

    /// Starts a family: its HELP and TYPE lines.
    mutating func family(_ name: String, _ type: MetricType, help: String) {
        text += "# HELP \(name) \(Self.escapeHelp(help))\n"
        text += "# TYPE \(name) \(type.rawValue)\n"
    }

    /// A gauge family of one sample.
    mutating func gauge(
        _ name: String, help: String, labels: [(String, String)], _ value: Double
    ) {
        family(name, .gauge, help: help)
        sample(name, labels, value)
    }

    /// One sample of the family last started (or a histogram's `_bucket`, `_sum`, `_count`).
    mutating func sample(_ name: String, _ labels: [(String, String)], _ value: Double) {
        text += name
        if !labels.isEmpty {
            text += "{"
            text += labels.map { "\($0.0)=\"\(Self.escapeLabel($0.1))\"" }.joined(separator: ",")
            text += "}"
        }
        text += " " + Self.number(value) + "\n"
    }

    /// `\` → `\\`, `"` → `\"`, line feed → `\n`: the label value escapes of the format.
    static func escapeLabel(_ value: String) -> String {
        ScalarEscaping.escape(value) { scalar in
            switch scalar {
            case "\\": .replace("\\\\")
            case "\"": .replace("\\\"")
            case "\n": .replace("\\n")
            default: .keep
            }
        }
    }

    /// `\` → `\\`, line feed → `\n`: HELP text's escapes (a quote stays as it is).
    static func escapeHelp(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(
            of: "\n", with: "\\n")
    }

    /// A sample value: a whole number as digits, others in the shortest form that reads back
    /// as the same double (Swift's description, which Go's `ParseFloat` reads).
    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value == .infinity { return "+Inf" }
        if value == -.infinity { return "-Inf" }
        return WholeNumberText.of(value)
    }

    /// The value of the first sample named `name` whose labels include every one of `labels`,
    /// in an exposition `text` (an earlier run's file); `nil` when there is none or it does
    /// not read. For carrying a value from one run's file to the next.
    static func value(of name: String, labels: [(String, String)], in text: String) -> Double? {
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            guard !line.hasPrefix("#"), line.hasPrefix(name) else { continue }
            let rest = line.dropFirst(name.count)
            guard let first = rest.first, first == "{" || first == " " else { continue }
            var labelText = Substring("")
            var valueText = rest
            if first == "{" {
                guard let close = rest.lastIndex(of: "}") else { continue }
                labelText = rest[rest.index(after: rest.startIndex)..<close]
                valueText = rest[rest.index(after: close)...]
            }
            let wanted = labels.map { "\($0.0)=\"\(escapeLabel($0.1))\"" }
            let present = labelText.split(separator: ",").map(String.init)
            guard wanted.allSatisfy(present.contains) else { continue }
            let fields = valueText.split(separator: " ")
            guard let field = fields.first else { continue }
            switch field {
            case "+Inf": return .infinity
            case "-Inf": return -.infinity
            case "NaN": return .nan
            default: if let number = Double(field) { return number }
            }
        }
        return nil
    }
}
