import Courier
import Foundation

/// Reads one JSON object of a job file strictly: typed getters that record an error (with the
/// JSON path and position) instead of throwing, and a final check that no unknown key is left.
/// Which keys it knows, and whether each resolves `${env:…}` as a template, come from its
/// ``JobObjectKeys`` (``JobKeys``).
struct NodeReader {
    let node: JSONNode
    let path: String
    let keys: JobObjectKeys
    let context: DecodingContext
    private var members: [(key: String, node: JSONNode)] = []
    private var used = Set<String>()

    /// Returns nil (and records an error) when `node` is not an object.
    init?(_ node: JSONNode, path: String, keys: JobObjectKeys, context: DecodingContext) {
        self.node = node
        self.path = path
        self.keys = keys
        self.context = context
        guard case .object(let members) = node.value else {
            context.error(path, "expected an object, found \(node.value.typeName)", at: node)
            return nil
        }
        self.members = members
    }

    func childPath(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    mutating func take(_ key: String) -> JSONNode? {
        assert(keys.contains(key), "\"\(key)\" is not a key of \(keys.name) in JobKeys")
        used.insert(key)
        return members.first { $0.key == key }?.node
    }

    /// Records an error for the key, at its position.
    func fail(_ key: String, _ message: String, at node: JSONNode) {
        context.error(childPath(key), message, at: node)
    }

    /// A string, with `${env:…}` resolved where the key allows it; in a templated key, `{…}` in
    /// an environment value stays text (``Template/environmentBrace``).
    mutating func string(_ key: String, required: Bool = false) -> String? {
        guard let value = take(key) else {
            if required { context.error(childPath(key), "is required (a string)", at: node) }
            return nil
        }
        guard case .string(let text) = value.value else {
            fail(key, "expected a string, found \(value.value.typeName)", at: value)
            return nil
        }
        return resolved(text, key: keys[key], path: childPath(key), at: value)
    }

    /// Any JSON value, with `${env:…}` resolved in every string where the key allows it.
    mutating func value(_ key: String) -> JSONNode? {
        guard let value = take(key) else { return nil }
        let spec = keys[key]
        guard spec.env else { return value }
        return context.resolveEnvironment(in: value, path: childPath(key), template: spec.templated)
    }

    private func resolved(_ text: String, key: JobKey, path: String, at node: JSONNode) -> String {
        key.env
            ? context.resolveEnvironment(text, path: path, at: node, template: key.templated)
            : text
    }

    /// A string key whose value must be one of an enum's raw values.
    mutating func choice<Value: RawRepresentable & CaseIterable>(
        _ key: String, of type: Value.Type
    ) -> Value? where Value.RawValue == String {
        guard let node = take(key), let text = string(key) else { return nil }
        if let value = Value(rawValue: text) { return value }
        let allowed = Value.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: " or ")
        fail(key, "expected \(allowed), found \"\(text)\"", at: node)
        return nil
    }

    mutating func number(_ key: String, range: ClosedRange<Double>, what: String) -> Double? {
        guard let value = take(key) else { return nil }
        guard case .number(let number) = value.value, range.contains(number) else {
            fail(key, "expected \(what), found \(describe(value))", at: value)
            return nil
        }
        return number
    }

    mutating func integer(_ key: String, range: ClosedRange<Int>, what: String) -> Int? {
        guard let value = take(key) else { return nil }
        guard case .number(let number) = value.value, number == number.rounded(),
            let integer = Int(exactly: number), range.contains(integer)
        else {
            fail(key, "expected \(what), found \(describe(value))", at: value)
            return nil
        }
        return integer
    }

    mutating func bool(_ key: String) -> Bool? {
        guard let value = take(key) else { return nil }
        guard case .bool(let flag) = value.value else {
            fail(key, "expected true or false, found \(describe(value))", at: value)
            return nil
        }
        return flag
    }

    /// An object of string values, in order.
    mutating func stringMap(_ key: String) -> [(
        name: String, value: String
    )]? {
        guard let value = take(key) else { return nil }
        guard case .object(let members) = value.value else {
            fail(key, "expected an object of strings, found \(value.value.typeName)", at: value)
            return nil
        }
        var result: [(name: String, value: String)] = []
        for member in members {
            let memberPath = "\(childPath(key)).\(member.key)"
            guard case .string(let text) = member.node.value else {
                context.error(
                    memberPath, "expected a string, found \(member.node.value.typeName)",
                    at: member.node)
                continue
            }
            result.append(
                (member.key, resolved(text, key: keys[key], path: memberPath, at: member.node)))
        }
        return result
    }

    /// Records an error for every key nobody took, suggesting the closest known one.
    func rejectUnknownKeys() {
        let known = keys.names
        for member in members where !used.contains(member.key) {
            var message = "unknown key \"\(member.key)\""
            if let suggestion = Self.closest(to: member.key, in: known) {
                message += "; did you mean \"\(suggestion)\"?"
            } else {
                message += "; expected one of \(known.map { "\"\($0)\"" }.joined(separator: ", "))"
            }
            context.error(childPath(member.key), message, at: member.node)
        }
    }

    func describe(_ node: JSONNode) -> String { Self.describe(node) }

    /// A value for a message: a number or string as written, else its type.
    static func describe(_ node: JSONNode) -> String {
        switch node.value {
        case .number: node.numberSource ?? "a number"
        case .string(let text): "\"\(text)\""
        case .array(let elements) where elements.isEmpty: "an empty array"
        case .object(let members) where members.isEmpty: "an empty object"
        default: node.value.typeName
        }
    }

    /// The known key within edit distance 2, if any.
    static func closest(to key: String, in known: [String]) -> String? {
        known.map { ($0, distance(key.lowercased(), $0.lowercased())) }
            .filter { $0.1 <= 2 }.min { $0.1 < $1.1 }?.0
    }

    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        var previous = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...max(b.count, 1) where !b.isEmpty {
                current[j] = min(
                    previous[j] + 1, current[j - 1] + 1,
                    previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}

/// State shared while decoding one file: its name, the environment, the errors and secrets
/// found so far.
final class DecodingContext {
    let file: String
    let environment: [String: String]
    /// The job file's folder: relative `${file:…}` paths start there.
    let folder: URL
    private(set) var errors: [JobFileError] = []
    private(set) var secrets = Set<String>()
    /// A `baseURL` given on the command line (`courier run --base-url`), read instead of the
    /// file's.
    var baseURLOverride: String?
    /// `courier run --window START..END`: the range every `window` task walks instead.
    var windowOverride: WindowOverride?
    /// When the windows end by default (now, less each task's lag).
    var now = Date()
    /// The job's kept cursors, read once when a `window` task needs them (which of its
    /// windows are done).
    private var cursors: [String: String]?

    /// The cursors kept in `outputDir`'s cursor file (none when it cannot be read: every
    /// window is then fetched, as a `since` task starts over).
    func keptCursors(outputDir: String) -> [String: String] {
        if let cursors { return cursors }
        let found = (try? CursorFile.load(CursorFile.location(outputDir: outputDir)).get()) ?? [:]
        cursors = found
        return found
    }

    init(file: String, environment: [String: String], folder: URL? = nil) {
        self.file = file
        self.environment = environment
        self.folder = folder ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    }

    func error(_ path: String, _ message: String, at node: JSONNode?) {
        errors.append(
            JobFileError(
                file: file, path: path, message: message, line: node?.line, column: node?.column))
    }

    func addSecret(_ value: String) {
        if !value.isEmpty { secrets.insert(value) }
    }

    /// The references a value may hold, each replaced when the file is read:
    /// - `${env:NAME}`: an environment variable, a secret from then on;
    /// - `${file:PATH}`: a file's contents without one final line break (how Docker and
    ///   Kubernetes mount secrets), a secret too; a relative path starts at the job file;
    /// - `${env-public:NAME}`: an environment variable that is not a secret (a base URL, a
    ///   tenant name), written in logs as it is.
    static let referenceKinds = ["env", "file", "env-public"]

    /// A `${file:…}` path that starts here is relative to `$CREDENTIALS_DIRECTORY`, where
    /// systemd's `LoadCredential=` puts a unit's secrets.
    static let credentialsPrefix = "$CREDENTIALS_DIRECTORY/"

    /// `text` with every reference replaced by its value (``referenceKinds``); a missing
    /// variable or an unreadable file is an error. In a template (`template`), the value's
    /// braces are marked so that they stay text: such a value is data, never a `{variable}`
    /// (``Template/environmentBrace``).
    func resolveEnvironment(
        _ text: String, path: String, at node: JSONNode, template: Bool = false
    ) -> String {
        guard text.contains("${") else { return text }
        var result = ""
        var rest = Substring(text)
        while let start = Self.nextReference(in: rest) {
            result += rest[..<start.range.lowerBound]
            let kind = start.kind
            guard let end = rest[start.range.upperBound...].firstIndex(of: "}") else {
                error(path, "unterminated ${\(kind):…} reference", at: node)
                return result + rest[start.range.lowerBound...]
            }
            let name = String(rest[start.range.upperBound..<end])
            if let value = value(of: kind, name, path: path, at: node) {
                if kind != "env-public" { addSecret(value) }
                if template, value.contains(Template.environmentBrace) {
                    error(
                        path,
                        "${\(kind):\(name)} holds U+E000 (a private-use character), which courier uses to mark its braces as text; it cannot go in a template",
                        at: node)
                    return result
                }
                result +=
                    template
                    ? value.replacingOccurrences(of: "{", with: Template.environmentBrace) : value
            }
            rest = rest[rest.index(after: end)...]
        }
        return result + rest
    }

    /// The first `${env:`, `${file:` or `${env-public:` in `text`, and which.
    private static func nextReference(in text: Substring) -> (
        range: Range<Substring.Index>, kind: String
    )? {
        referenceKinds.compactMap { kind in
            text.range(of: "${\(kind):").map { (range: $0, kind: kind) }
        }.min { $0.range.lowerBound < $1.range.lowerBound }
    }

    /// The value a reference stands for; `nil` (with an error recorded) when there is none.
    private func value(of kind: String, _ name: String, path: String, at node: JSONNode)
        -> String?
    {
        if kind == "file" {
            guard !name.isEmpty else {
                error(path, "${file:…} needs a path", at: node)
                return nil
            }
            let url: URL
            if name.hasPrefix(Self.credentialsPrefix) {
                // systemd's LoadCredential= puts each credential in a folder of the unit's own
                // and names it in this variable; the folder differs from unit to unit.
                guard let credentials = environment["CREDENTIALS_DIRECTORY"],
                    credentials.hasPrefix("/")
                else {
                    error(
                        path,
                        "CREDENTIALS_DIRECTORY is not set (systemd sets it for a unit with LoadCredential=; referenced as ${file:\(name)})",
                        at: node)
                    return nil
                }
                url = URL(fileURLWithPath: credentials).appendingPathComponent(
                    String(name.dropFirst(Self.credentialsPrefix.count)))
            } else {
                url =
                    name.hasPrefix("/")
                    ? URL(fileURLWithPath: name) : folder.appendingPathComponent(name)
            }
            if let problem = FileSystem.notRegularFile(url) {
                error(path, "\(problem) (referenced as ${file:\(name)})", at: node)
                return nil
            }
            // A secret is short: a runaway file (a log, an image) is refused, not read whole.
            let bytes: [UInt8]
            do {
                bytes = try FileSystem.read(url, limit: 64 << 10)
            } catch {
                let reason =
                    error.code == EFBIG
                    ? "is larger than 64 KiB"
                    : "cannot be read (\(String(cString: strerror(error.code))))"
                self.error(path, "\(name) \(reason) (referenced as ${file:\(name)})", at: node)
                return nil
            }
            guard let text = String(validating: bytes, as: UTF8.self) else {
                error(path, "\(name) is not UTF-8 text (referenced as ${file:\(name)})", at: node)
                return nil
            }
            // One final line break is the file's, not the secret's (`echo token > file`).
            if text.hasSuffix("\r\n") { return String(text.dropLast(2)) }
            if text.hasSuffix("\n") { return String(text.dropLast()) }
            return text
        }
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
            error(path, "invalid environment variable name \"\(name)\" in ${\(kind):…}", at: node)
            return nil
        }
        guard let value = environment[name] else {
            error(
                path,
                "environment variable \(name) is not set (referenced as ${\(kind):\(name)})",
                at: node)
            return nil
        }
        return value
    }

    /// `node` with `${env:…}` resolved in every string, at any depth (a task's `json`).
    func resolveEnvironment(in node: JSONNode, path: String, template: Bool) -> JSONNode {
        var copy = node
        switch node.value {
        case .string(let text):
            copy.value = .string(resolveEnvironment(text, path: path, at: node, template: template))
        case .array(let elements):
            copy.value = .array(
                elements.enumerated().map {
                    resolveEnvironment(in: $1, path: "\(path)[\($0)]", template: template)
                })
        case .object(let members):
            copy.value = .object(
                members.map {
                    (
                        $0.key,
                        resolveEnvironment(
                            in: $0.node, path: "\(path).\($0.key)", template: template)
                    )
                })
        default:
            break
        }
        return copy
    }
}
