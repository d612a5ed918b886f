import Courier
import Foundation

/// The OpenTelemetry SDK's environment variables that Courier reads, as other OpenTelemetry
/// tools read them (the specification's "OTLP Exporter Configuration"):
/// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the traces URL, used as given), else
/// `OTEL_EXPORTER_OTLP_ENDPOINT` (a base URL: `v1/traces` is appended to its path),
/// `OTEL_EXPORTER_OTLP_HEADERS` and `OTEL_EXPORTER_OTLP_TRACES_HEADERS` (`name=value` pairs,
/// comma-separated, values percent-decoded; secrets such as an API key), `OTEL_SERVICE_NAME`,
/// and `OTEL_SDK_DISABLED` / `OTEL_TRACES_EXPORTER=none`, which turn the export off.
struct OTLPEnvironment: Sendable, Equatable {
    /// Where a run's traces go; `nil` when no endpoint is set or the export is off.
    var tracesURL: URL?
    var headers: [(name: String, value: String)] = []
    var serviceName = "courier"
    /// Why a variable was not taken, in words that show no value of it.
    var problems: [String] = []

    init(_ environment: [String: String]) {
        if let name = environment["OTEL_SERVICE_NAME"], !name.isEmpty { serviceName = name }
        let disabled =
            environment["OTEL_SDK_DISABLED"]?.lowercased() == "true"
            || environment["OTEL_TRACES_EXPORTER"]?.lowercased() == "none"
        if !disabled { tracesURL = url(environment) }
        for variable in ["OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"] {
            guard let text = environment[variable], !text.isEmpty else { continue }
            guard let pairs = Self.headers(text) else {
                problems.append("\(variable) is not a list of name=value pairs; not sent")
                continue
            }
            // The traces' own list overrides the general one, name by name.
            for pair in pairs {
                headers.removeAll { $0.name.lowercased() == pair.name.lowercased() }
                headers.append(pair)
            }
        }
    }

    private mutating func url(_ environment: [String: String]) -> URL? {
        if let text = environment["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"], !text.isEmpty {
            guard let url = Origin.httpURL(text) else {
                problems.append("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is not an http or https URL")
                return nil
            }
            return url
        }
        guard let text = environment["OTEL_EXPORTER_OTLP_ENDPOINT"], !text.isEmpty else {
            return nil
        }
        guard Origin.httpURL(text) != nil, var components = URLComponents(string: text) else {
            problems.append("OTEL_EXPORTER_OTLP_ENDPOINT is not an http or https URL")
            return nil
        }
        var path = components.percentEncodedPath
        if !path.hasSuffix("/") { path += "/" }
        components.percentEncodedPath = path + "v1/traces"
        return components.url
    }

    /// `name=value,name=value`: names trimmed, values trimmed and percent-decoded; `nil` when
    /// a pair has no `=` or no name.
    static func headers(_ text: String) -> [(name: String, value: String)]? {
        var pairs: [(name: String, value: String)] = []
        for item in text.split(separator: ",", omittingEmptySubsequences: true) {
            guard let equals = item.firstIndex(of: "=") else { return nil }
            let name = item[..<equals].trimmingCharacters(in: .whitespaces)
            let raw = item[item.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty, let value = raw.removingPercentEncoding else { return nil }
            pairs.append((name, value))
        }
        return pairs
    }

    static func == (left: OTLPEnvironment, right: OTLPEnvironment) -> Bool {
        left.tracesURL == right.tracesURL && left.serviceName == right.serviceName
            && left.problems == right.problems
            && left.headers.map { [$0.name, $0.value] }
                == right.headers.map { [$0.name, $0.value] }
    }
}
