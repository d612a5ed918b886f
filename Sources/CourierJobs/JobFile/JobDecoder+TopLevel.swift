import Courier
import Foundation

/// The top-level keys of a job file that need more than a typed getter: its version, name,
/// base URL, home and tasks, and the secrets its auth and headers hold.
extension JobDecoder {
    static func decodeVersion(_ reader: inout NodeReader, root: JSONNode, context: DecodingContext)
    {
        guard let version = reader.take("version") else {
            context.error("version", "is required (1)", at: root)
            return
        }
        if version.value != .number(1) {
            reader.fail(
                "version",
                "expected 1 (the only version this courier reads), found \(reader.describe(version))",
                at: version)
        }
    }

    /// Whether `name` may name a job: ASCII letters and digits, `-`, `_` and `.`, and not
    /// dots alone (it names the log folder, the lock and the outputs' state: `..` put the logs
    /// beside the job file and a save over it, trial EEE).
    static func isValidName(_ name: String) -> Bool {
        name.contains { $0 != "." }
            && name.unicodeScalars.allSatisfy { scalar in
                scalar.isASCII
                    && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                        || "-_.".unicodeScalars.contains(scalar))
            }
    }

    static func decodeName(_ reader: inout NodeReader, context: DecodingContext) -> String {
        let secretsBefore = context.secrets
        guard let name = reader.string("name", required: true) else { return "" }
        if context.secrets != secretsBefore {
            // The name is the log folder's and is in every log line, which no secret may be
            // (trial FFF: `${env:JN}` was written in clear, and the log path printed redacted).
            context.error(
                "name",
                "takes a secret (${env:…} or ${file:…}), but the name is in the log folder's name and every log line; write it out, or use ${env-public:NAME}",
                at: reader.take("name"))
        } else if !isValidName(name) {
            context.error(
                "name",
                "expected letters A-Z a-z, digits, '-', '_' or '.', and not dots alone (it names the log folder), found \"\(name)\"",
                at: reader.take("name"))
        }
        return name
    }

    /// The job's `headers`, their names and values checked, each error at its value.
    static func decodeHeaders(
        _ reader: inout NodeReader, root: JSONNode, context: DecodingContext
    ) -> [(name: String, value: String)] {
        let headers = reader.stringMap("headers") ?? []
        validateHeaderNames(
            headers, path: "headers", at: root, nodes: reader.memberNodes(of: "headers"),
            context: context)
        return headers
    }

    /// `outputDir`, `out/NAME` when not given; an empty one is refused: saves would land
    /// beside the job file, among its logs (trial FFF).
    static func decodeOutputDir(
        _ reader: inout NodeReader, name: String, context: DecodingContext
    ) -> String {
        let node = reader.take("outputDir")
        let outputDir = reader.string("outputDir") ?? "out/\(name)"
        if outputDir.isEmpty, let node {
            context.error(
                "outputDir", "expected a folder (\".\" for the job's home), found \"\"", at: node)
        }
        // The job's log folder holds its history and its lock: outputs there took the lock
        // for another run's (trial QQQ: exit 3 every night, which cron wrappers skip).
        var parts: [Substring] = []
        for part in outputDir.split(separator: "/") where part != "." {
            if part == ".." { _ = parts.popLast() } else { parts.append(part) }
        }
        if parts.count >= 2, parts[0] == "logs", parts[1] == name, let node {
            context.error(
                "outputDir",
                "\"\(outputDir)\" is in the job's log folder (logs/\(name)), which holds its history and its lock: put the outputs elsewhere (the default is out/\(name))",
                at: node)
        }
        return outputDir
    }

    /// `baseURL`, or `--base-url`'s value, which replaces the file's (not read at all then).
    /// Credentials in it are secrets like `${env:…}`: sent as Basic auth, never written.
    static func decodeBaseURL(_ reader: inout NodeReader, context: DecodingContext) -> URL? {
        if context.baseURLOverride != nil { _ = reader.take("baseURL") }
        let errorsBefore = context.errors.count
        guard let text = context.baseURLOverride ?? reader.string("baseURL") else { return nil }
        if context.errors.count > errorsBefore {
            // Its reference said what is wrong (a variable not set): that is the one error,
            // not also an empty URL and every path that needs one.
            context.baseURLUnresolved = true
            return nil
        }
        let baseURL = Origin.httpURL(text)
        if let components = baseURL.flatMap({
            URLComponents(url: $0, resolvingAgainstBaseURL: false)
        }), let password = components.password {
            context.addSecret(password)
            context.addSecret(basicCredential(components.user ?? "", password))
        }
        if baseURL == nil {
            if context.baseURLOverride != nil {
                context.error(
                    "baseURL",
                    "--base-url: expected an absolute http or https URL, found \"\(text)\"",
                    at: nil)
            } else {
                reader.fail(
                    "baseURL", "expected an absolute http or https URL, found \"\(text)\"",
                    at: reader.take("baseURL")!)
            }
        }
        return baseURL
    }

    /// The job's home (``JobHome``): its `home`, or the job file's folder.
    static func decodeHome(_ reader: inout NodeReader, file: URL) -> JobHome {
        let node = reader.take("home")
        let named = reader.string("home")
        if named == "", let node {
            reader.fail(
                "home", "expected a folder (absolute, or relative to the job file's), found \"\"",
                at: node)
        }
        return JobHome(jobFile: file, named: named == "" ? nil : named)
    }

    static func decodeTasks(
        _ reader: inout NodeReader, root: JSONNode, defaults: TaskDefaults,
        context: DecodingContext
    ) -> [TaskSpec] {
        guard let node = reader.take("tasks") else {
            context.error("tasks", "is required (an array of tasks)", at: root)
            return []
        }
        guard case .array(let elements) = node.value, !elements.isEmpty else {
            reader.fail(
                "tasks", "expected a non-empty array of tasks, found \(reader.describe(node))",
                at: node)
            return []
        }
        return elements.enumerated().compactMap { index, element in
            TaskDecoder.decode(
                element, path: "tasks[\(index)]", defaults: defaults, context: context)
        }
    }

    /// The job's credentials as secrets: never written, in any form a server could echo.
    static func addSecrets(
        of auth: Authentication?, headers: [(name: String, value: String)],
        context: DecodingContext
    ) {
        if case .bearer(let token) = auth { context.addSecret(token) }
        if case .basic(let user, let password) = auth {
            context.addSecret(password)
            // Basic's wire form, which a server echoing the header would show.
            context.addSecret(basicCredential(user, password))
        }
        addLiteralCredentials(headers, context: context)
        if case .header(_, let value) = auth { context.addSecret(value) }
        if case .query(_, let value) = auth { context.addSecret(value) }
    }
}
