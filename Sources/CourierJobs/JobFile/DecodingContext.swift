import Courier
import Foundation

/// State shared while decoding one file: its name, the environment, the errors and secrets
/// found so far.
final class DecodingContext {
    let file: String
    let environment: [String: String]
    /// The job file's folder: relative `${file:…}` paths start there.
    let folder: URL
    private(set) var errors: [JobFileError] = []
    /// What does not stop the job but is likely a mistake (``UnreplacedReferences``): said by
    /// `validate`, and by `run` on a terminal.
    private(set) var notes: [JobFileError] = []
    /// The `baseURL` is there but its reference could not be resolved (an error says so): the
    /// tasks' paths are not also told they need one.
    var baseURLUnresolved = false
    private(set) var secrets = Set<String>()
    /// The secret references whose value is empty (`${env:NAME}`, as written): a variable
    /// set to nothing by an incomplete cron or credentials setup sends `Bearer ` as
    /// faithfully as a token, so the run says so (``Job/emptySecrets``).
    private(set) var emptySecrets: [String] = []
    /// Where each string that had its references replaced stands (line and column): any
    /// other string holding one is refused (``UnreplacedReferences``).
    private(set) var replacedAt = Set<SourcePosition>()
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

    func note(_ path: String, _ message: String, at node: JSONNode?) {
        notes.append(
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
    ///
    /// In a `path` (`inPath`) or a whole URL (`inURL`), a value is data, encoded as the part
    /// it lands in asks (``urlData(_:after:wholeURL:)``): its `?` and `#` would otherwise
    /// start a query or a fragment, sending part of a secret where the server reads something
    /// else (a fragment is not sent at all).
    func resolveEnvironment(
        _ text: String, path: String, at node: JSONNode, template: Bool = false,
        inPath: Bool = false, inURL: Bool = false
    ) -> String {
        replacedAt.insert(SourcePosition(node))
        guard text.contains("${") else { return text }
        var result = ""
        var rest = Substring(text)
        while let start = Self.nextReference(in: rest) {
            result += rest[..<start.range.lowerBound]
            checkUnknownReferences(in: rest[..<start.range.lowerBound], path: path, at: node)
            let kind = start.kind
            guard let end = rest[start.range.upperBound...].firstIndex(of: "}") else {
                error(path, "unterminated ${\(kind):…} reference", at: node)
                return result + rest[start.range.lowerBound...]
            }
            let name = String(rest[start.range.upperBound..<end])
            if let value = value(of: kind, name, path: path, at: node) {
                if value.contains(Redactor.placeholder)
                    || value.lowercased().contains("%3credacted%3e")
                {
                    // Copied from a log, a plan or an imported job: the server would get that
                    // word for the secret.
                    error(
                        path,
                        "${\(kind):\(name)} holds \(Redactor.placeholder), which courier writes for a secret it left out: set it to the secret itself",
                        at: node)
                    return result
                }
                if kind != "env-public" { addSecret(value) }
                if kind != "env-public", value.isEmpty,
                    !emptySecrets.contains("${\(kind):\(name)}")
                {
                    emptySecrets.append("${\(kind):\(name)}")
                }
                if template, value.contains(Template.environmentBrace) {
                    error(
                        path,
                        "${\(kind):\(name)} holds U+E000 (a private-use character), which courier uses to mark its braces as text; it cannot go in a template",
                        at: node)
                    return result
                }
                let data =
                    inPath || inURL ? Self.urlData(value, after: result, wholeURL: inURL) : value
                result +=
                    template
                    ? data.replacingOccurrences(of: "{", with: Template.environmentBrace) : data
            }
            rest = rest[rest.index(after: end)...]
        }
        checkUnknownReferences(in: rest, path: path, at: node)
        return result + rest
    }

    /// A value that lands in a URL after `before` (the URL's text before it): at the start of
    /// a `url` (`wholeURL`) as it is (a base URL); in a path and in a query (a `path` may hold
    /// its own, `/a?x=${env:V}`) as ``PercentEncoding`` says
    /// (``PercentEncoding/dataInPath(_:)``, ``PercentEncoding/dataInQuery(_:)``).
    static func urlData(_ value: String, after before: String, wholeURL: Bool) -> String {
        if wholeURL, before.isEmpty { return value }
        // A fragment, which is never sent, holds no second `#`.
        if before.contains("#") { return value.replacingOccurrences(of: "#", with: "%23") }
        return before.contains("?")
            ? PercentEncoding.dataInQuery(value) : PercentEncoding.dataInPath(value)
    }

    /// Records an error for a `${kind:…}` whose kind is none of ``referenceKinds`` (`${evn:…}`,
    /// `${ENV:…}`): sent as it stands, the typo would go to the server as text, and a key's
    /// typo is never ignored either.
    private func checkUnknownReferences(in text: Substring, path: String, at node: JSONNode) {
        var rest = text
        while let found = Self.referenceShape(in: rest) {
            rest = rest[found.end...]
            if found.spaced, Self.referenceKinds.contains(found.kind) {
                error(
                    path,
                    "a reference has no spaces: write ${\(found.kind):\(found.kind == "file" ? "PATH" : "NAME")} (as it stands it would be sent as text)",
                    at: node)
                continue
            }
            let normalized = String(
                found.kind.lowercased().map { $0 == "_" || $0 == "." ? "-" : $0 })
            let hint = NodeReader.closest(to: normalized, in: Self.referenceKinds)
            error(
                path,
                "unknown reference ${\(found.kind):…}: expected ${env:NAME}, ${env-public:NAME} or ${file:PATH}"
                    + (hint.map { "; did you mean ${\($0):…}?" } ?? ""),
                at: node)
        }
    }

    /// The next `${kind:` in `text`: what a reference, or a typo of one, looks like. The kind
    /// is up to 20 letters, digits, `-`, `_`, `.` and spaces, from a letter (`${env_public:`,
    /// `${env :`, `${ env:`); `spaced` says a space was in it. `${name}` without a colon is
    /// not one (a shell-like text).
    static func referenceShape(in text: Substring) -> (
        kind: String, spaced: Bool, end: Substring.Index
    )? {
        var rest = text
        while let open = rest.range(of: "${") {
            let after = rest[open.upperBound...]
            rest = after
            let written = after.prefix(21).prefix {
                $0.isASCII && ($0.isLetter || $0.isNumber || "-_. \t".contains($0))
            }
            let colon = after.dropFirst(written.count)
            let kind = written.filter { $0 != " " && $0 != "\t" }
            guard colon.first == ":", written.count <= 20, kind.first?.isLetter == true
            else { continue }
            return (String(kind), kind.count != written.count, colon.startIndex)
        }
        return nil
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
