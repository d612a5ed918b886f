import Courier
import Foundation

/// The secrets of a `--format curl` script and the environment variables that stand for them,
/// and the search for a secret in any form it takes in a command's text.
///
/// A secret appears as it is, percent-encoded (a query value such as `a%20b%26c%2Fd`; in a
/// path, `/`, `+`, `&` and the like stay as they are) or JSON-escaped (`a\"b` in a JSON body).
/// A reference must expand to the same bytes, so each form has its own: `${NAME}`,
/// `$(courier_urlencode "$NAME")`, `$(courier_pathencode "$NAME")`,
/// `$(courier_queryencode "$NAME")` and `$(courier_json "$NAME")`, the shell functions being
/// defined in the script's preamble (``helperDefinitions``).
///
/// Only secrets of ``Redactor/minimumLength`` bytes or more are searched for, as in the log: a
/// one-letter password found in every word would turn `User-Agent` into a reference. Where a
/// request says a value is secret (a header's, a Basic password) ``CurlCommand`` writes its
/// reference whatever its length.
struct SecretReferences {
    /// How a secret was written where it was found.
    enum Form: CaseIterable {
        /// As it is. Then the exact encodings the job runner writes in a URL, which a
        /// reference reproduces byte for byte: a path (``PercentEncoding/path(_:)``), a query
        /// written in a path template (``PercentEncoding/queryText(_:)``) and a query item
        /// (every byte but the unreserved ones); an environment value in a `url`'s query
        /// (``PercentEncoding/dataInQuery(_:)``, then the URL made valid). Then JSON escapes.
        case raw, pathEncoded, queryTextEncoded, percentEncoded, queryData, jsonEscaped

        /// The shell expression that expands to the secret in this form.
        func reference(to name: String) -> String {
            switch self {
            case .raw: "${\(name)}"
            case .pathEncoded: "$(courier_pathencode \"$\(name)\")"
            case .queryTextEncoded: "$(courier_queryencode \"$\(name)\")"
            case .percentEncoded: "$(courier_urlencode \"$\(name)\")"
            case .queryData: "$(courier_querydata \"$\(name)\")"
            case .jsonEscaped: "$(courier_json \"$\(name)\")"
            }
        }
    }

    /// One secret and its variable.
    struct Entry {
        let value: [UInt8]
        fileprivate(set) var name: String
        /// What the variable holds, for a variable courier named (`nil`: found in the environment).
        let meaning: String?
        /// The value as a URL path, a URL query text and a query item write it.
        let pathEncoded: [UInt8]
        let queryTextEncoded: [UInt8]
        let percentEncoded: [UInt8]
        let queryData: [UInt8]

        init(value: [UInt8], name: String, meaning: String?) {
            self.value = value
            self.name = name
            self.meaning = meaning
            let text = String(decoding: value, as: UTF8.self)
            pathEncoded = Array(PercentEncoding.path(text).utf8)
            queryTextEncoded = Array(PercentEncoding.queryText(text).utf8)
            percentEncoded = Array(PercentEncoding.unreserved(text).utf8)
            queryData = Array(PercentEncoding.urlText(PercentEncoding.dataInQuery(text)).utf8)
        }

        /// Whether the value is long enough to be searched for in free text.
        var searchable: Bool { value.count >= Redactor.minimumLength }
    }

    /// Longest values first, so that a secret holding another is replaced whole.
    private(set) var entries: [Entry] = []
    private let environment: [String: String]
    private var counter = 0

    init(environment: [String: String]) {
        self.environment = environment
    }

    /// Adds a secret; `meaning` says what it is when no environment variable holds it.
    mutating func add(_ secret: String, meaning: String = "a secret of the job") {
        let bytes = Array(secret.utf8)
        guard !bytes.isEmpty, !entries.contains(where: { $0.value == bytes }) else { return }
        let entry: Entry
        // Named after the environment variable that holds it only when exactly one does and
        // the value is long enough to be its own: `PW=1` beside another variable that is 1,
        // or `PW=/root` beside `HOME`, would name the wrong variable and tell the value.
        let holders = environment.filter { $0.value == secret }.keys
        if holders.count == 1, let name = holders.first, bytes.count >= Redactor.minimumLength {
            entry = Entry(value: bytes, name: name, meaning: nil)
        } else {
            counter += 1
            entry = Entry(value: bytes, name: "COURIER_SECRET_\(counter)", meaning: meaning)
        }
        let index = entries.firstIndex { $0.value.count < bytes.count } ?? entries.count
        entries.insert(entry, at: index)
    }

    /// Numbers the variables courier named (`COURIER_SECRET_n`) that `used` holds 1, 2, … in
    /// the order they were added, and returns `used` with the new names.
    mutating func renumber(used: Set<String>) -> Set<String> {
        let prefix = "COURIER_SECRET_"
        let named = entries.indices.filter { entries[$0].meaning != nil }
            .filter { entries[$0].name.hasPrefix(prefix) && used.contains(entries[$0].name) }
            .sorted {
                Int(entries[$0].name.dropFirst(prefix.count)) ?? 0 < Int(
                    entries[$1].name.dropFirst(prefix.count)) ?? 0
            }
        var names = used
        for (number, index) in named.enumerated() {
            names.remove(entries[index].name)
            entries[index].name = prefix + String(number + 1)
            names.insert(entries[index].name)
        }
        return names
    }

    /// Adds a value the commands refer to by a name of courier's (an access token the script
    /// sets itself).
    mutating func add(_ secret: String, named name: String, meaning: String) {
        let bytes = Array(secret.utf8)
        guard !bytes.isEmpty, !entries.contains(where: { $0.value == bytes }) else { return }
        let index = entries.firstIndex { $0.value.count < bytes.count } ?? entries.count
        entries.insert(Entry(value: bytes, name: name, meaning: meaning), at: index)
    }

    /// The reference that spells `secret` whole: a known secret in one of its forms (an
    /// OAuth2 client's secret percent-encoded into its Basic password, say), or the entry of
    /// that very value, whatever its length; `nil` when neither is known.
    func reference(for secret: String) -> (entry: Entry, form: Form)? {
        let bytes = Array(secret.utf8)
        if let found = match(in: bytes, at: 0), found.length == bytes.count {
            return (found.entry, found.form)
        }
        return entries.first { $0.value == bytes }.map { ($0, .raw) }
    }

    /// Whether `text` holds a known secret in any form.
    func covers(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.indices.contains { match(in: bytes, at: $0) != nil }
    }

    /// The finder of every form of every searchable secret, whose ranges a command must not
    /// print as they are.
    var redactor: Redactor {
        Redactor(
            secrets: Set(
                entries.filter(\.searchable).map { String(decoding: $0.value, as: UTF8.self) }))
    }

    /// The longest-first searchable secret found at `index`, its form and the bytes it spans.
    func match(in bytes: [UInt8], at index: Int) -> (entry: Entry, form: Form, length: Int)? {
        for entry in entries where entry.searchable {
            for form in Form.allCases {
                if let length = Self.length(of: entry, as: form, in: bytes, at: index) {
                    return (entry, form, length)
                }
            }
        }
        return nil
    }

    /// How many bytes of `bytes` from `index` spell the entry's secret in `form`, or `nil`.
    static func length(of entry: Entry, as form: Form, in bytes: [UInt8], at index: Int) -> Int? {
        let exact: [UInt8]
        switch form {
        case .raw: exact = entry.value
        case .pathEncoded: exact = entry.pathEncoded
        case .queryTextEncoded: exact = entry.queryTextEncoded
        // Exactly as `courier_urlencode` writes it: a text that decodes to the secret but was
        // encoded otherwise (a `?` left raw in a path, a `+` for a space) would be sent as
        // other bytes, so the range is `<redacted>` instead.
        case .percentEncoded: exact = entry.percentEncoded
        case .queryData: exact = entry.queryData
        case .jsonEscaped: return jsonEscapedLength(of: entry.value, in: bytes, at: index)
        }
        return starts(bytes, with: exact, at: index) ? exact.count : nil
    }

    /// Whether `bytes` holds `prefix` from `index`.
    static func starts(_ bytes: [UInt8], with prefix: [UInt8], at index: Int) -> Bool {
        index + prefix.count <= bytes.count
            && bytes[index..<index + prefix.count].elementsEqual(prefix)
    }

    /// How many bytes of `bytes` from `index` spell `secret` JSON-escaped, escape by escape
    /// (`\"`, `\/`, `\u00e9` or the byte as it is), or `nil`.
    private static func jsonEscapedLength(of secret: [UInt8], in bytes: [UInt8], at index: Int)
        -> Int?
    {
        var position = index
        var wanted = secret[...]
        while !wanted.isEmpty {
            guard position < bytes.count else { return nil }
            let (decoded, count) =
                JSONEscape.decode(bytes, at: position) ?? ([bytes[position]], 1)
            // An escape that stands for several bytes counts only when the secret has them all.
            guard wanted.starts(with: decoded) else { return nil }
            wanted = wanted.dropFirst(decoded.count)
            position += count
        }
        return position - index
    }

    /// Comment lines naming every variable the commands use, and what each one holds.
    func notes(using names: Set<String>) -> [String] {
        let used = entries.filter { names.contains($0.name) }.sorted { $0.name < $1.name }
        guard !used.isEmpty else { return [] }
        var notes = ["# secrets are read from the environment; export these before running:"]
        for entry in used {
            notes.append(
                "#   \(entry.name): "
                    + (entry.meaning.map { "\($0) (not printed)" }
                        ?? "as it is set now (it holds a secret the job used)"))
        }
        // `set -u` stops at a variable not set; one set empty would go as an empty
        // credential (`Bearer `), so the script stops at that too.
        for entry in used {
            notes.append(#": "${\#(entry.name):?export \#(entry.name) first (see above)}""#)
        }
        return notes
    }

    /// The shell functions that write a secret percent-encoded (every byte but RFC 3986's
    /// unreserved ones; or as a path or a query text, keeping what those keep, as
    /// ``PercentEncoding`` does, an existing `%XX` included) or JSON-escaped, byte by byte
    /// (`LC_ALL=C`) whatever the locale.
    static let helperDefinitions = [
        #"courier_urlencode() { local LC_ALL=C s=$1 o= c i; for ((i = 0; i < ${#s}; i++)); do c=${s:i:1}; case $c in [A-Za-z0-9._~-]) o+=$c ;; *) printf -v c %%%02X "'$c"; o+=$c ;; esac; done; printf %s "$o"; }"#,
        #"courier_escape() { local LC_ALL=C s=$1 keep=$2 o= c i; for ((i = 0; i < ${#s}; i++)); do c=${s:i:1}; if [[ $c == [A-Za-z0-9._~-] || ( $c != % && $keep == *"$c"* ) || ( $c == % && ${s:i+1:2} == [0-9A-Fa-f][0-9A-Fa-f] ) ]]; then o+=$c; else printf -v c %%%02X "'$c"; o+=$c; fi; done; printf %s "$o"; }"#,
        #"courier_pathencode() { courier_escape "$1" "!\$&'()*+,/:=@"; }"#,
        #"courier_queryencode() { courier_escape "$1" "!\$&'()*+,/:;=?@"; }"#,
        #"courier_querydata() { courier_escape "$1" "!\$'()*,/:;?@[]"; }"#,
        #"courier_json() { local s=$1; s=${s//\\/\\\\}; s=${s//\"/\\\"}; s=${s//$'\n'/\\n}; s=${s//$'\r'/\\r}; s=${s//$'\t'/\\t}; printf %s "$s"; }"#,
    ]
}
