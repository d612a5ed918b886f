import Courier
import Foundation

/// Removes a run's secrets from every byte that leaves the process: log lines, stdout,
/// stderr, dry-run plans and error messages. (Which headers and bodies hold a secret is
/// decided before sending: `SecretMarking` for a job's values, the library's `SecretHeaders`
/// for header names; this type only finds and replaces.)
///
/// A secret is found in every form it can take on the way out: as it is, percent-encoded in
/// full or in part (`a%20b`, `a%2Fb`, `+` for a space), JSON-escaped (`\"`, `\\`, `\/`,
/// `\u00e9`), one escape inside another (a JSON body logged as JSON text), and inside base64
/// text (``Base64Forms``, for a secret of 6 bytes or more). Values shorter
/// than ``minimumLength`` bytes are not searched for: a two-digit secret would erase every
/// such number from a log; secret headers are redacted by name whatever their length.
struct Redactor: Sendable {
    static let placeholder = SecretHeaders.placeholder
    /// The shortest value searched for in free text.
    static let minimumLength = 4

    /// Byte patterns to find: each secret, and its form-encoded variant where it has spaces.
    private let known: [[UInt8]]
    /// Secrets learned while running (secret captures such as a login token), shared by every
    /// copy of this redactor: the log's, the terminal's.
    private let learned: LearnedSecrets?

    init(secrets: Set<String>) {
        known = Self.patterns(for: secrets)
        learned = nil
    }

    private init(known: [[UInt8]], learned: LearnedSecrets) {
        self.known = known
        self.learned = learned
    }

    /// This redactor, able to ``learn(_:)`` secrets from now on (every copy made after this
    /// call learns them too).
    func learning() -> Redactor {
        Redactor(known: known, learned: LearnedSecrets(known: known))
    }

    /// Adds a secret found while running; it is redacted from every line written after this.
    /// Ignored by a redactor not made with ``learning()``.
    func learn(_ secret: String) {
        if !secret.isEmpty, secret.utf8.count < Self.minimumLength { learned?.noteShort() }
        learned?.add(Self.patterns(for: [secret]))
    }

    /// How many secrets learned while running were too short to be searched for in free
    /// text (a captured token of 3 bytes): they stand as they are in URLs and bodies.
    var shortSecretsLearned: Int { learned?.shortCount ?? 0 }

    private var patterns: [[UInt8]] { learned?.patterns ?? known }

    /// Byte patterns for `secrets`, longest first, so a secret that contains another is
    /// replaced whole.
    private static func patterns(for secrets: Set<String>) -> [[UInt8]] {
        var patterns = Set<[UInt8]>()
        for secret in secrets where secret.utf8.count >= Self.minimumLength {
            patterns.insert(Array(secret.utf8))
            if secret.contains(" ") {
                patterns.insert(Array(secret.replacingOccurrences(of: " ", with: "+").utf8))
            }
            // The encodings a job's URL gives it, as they are: a path or a query written in a
            // template keeps an escape the secret itself holds (`%41`) while escaping the rest,
            // a mix no decoding of the text gives back.
            patterns.insert(Array(PercentEncoding.path(secret).utf8))
            patterns.insert(Array(PercentEncoding.queryText(secret).utf8))
            // As a task's `url` sends an environment value, in its path and its query.
            patterns.insert(Array(PercentEncoding.urlText(PercentEncoding.dataInPath(secret)).utf8))
            patterns.insert(
                Array(PercentEncoding.urlText(PercentEncoding.dataInQuery(secret)).utf8))
            // And as Foundation writes it in a URL (its own mix: `\` and a space escaped, `%41`
            // escaped again whenever anything is), in a path and in a query.
            for prefix in ["http://h/", "http://h/?"] {
                if let url = URL(string: prefix + secret), url.absoluteString.hasPrefix(prefix) {
                    patterns.insert(Array(url.absoluteString.utf8.dropFirst(prefix.utf8.count)))
                }
            }
            // Inside base64 text, at any alignment (a token a server echoes encoded).
            patterns.formUnion(Base64Forms.of(Array(secret.utf8)))
        }
        return patterns.sorted { $0.count > $1.count }
    }

    /// Whether there is anything to redact at all.
    var isEmpty: Bool { patterns.isEmpty }

    /// The text with every form of every secret replaced by `<redacted>`.
    func scrub(_ text: String) -> String {
        guard !patterns.isEmpty else { return text }
        let bytes = Array(text.utf8)
        let ranges = matches(in: bytes, from: 0, to: bytes.count)
        guard !ranges.isEmpty else { return text }
        return String(decoding: replacing(ranges, in: bytes), as: UTF8.self)
    }

    /// The bytes with every form of every secret replaced by `<redacted>`.
    func scrub(bytes: [UInt8]) -> [UInt8] {
        guard !patterns.isEmpty else { return bytes }
        let ranges = matches(in: bytes, from: 0, to: bytes.count)
        return ranges.isEmpty ? bytes : replacing(ranges, in: bytes)
    }

    /// One JSON line with secrets replaced inside its string values only, so that the line
    /// stays valid JSON whatever the secrets are.
    ///
    /// Keys are never touched, nor the values of the log's own structure (``structuralKeys``:
    /// the event, time, run, job and task, and `replayOf`'s run and task): a secret that happens to equal
    /// the year or the job's name once erased every timestamp, and `report` and `--resume`
    /// could read nothing. Secrets live in what requests and responses carry.
    func scrubJSON(_ bytes: [UInt8]) -> [UInt8] {
        guard !patterns.isEmpty else { return bytes }
        var ranges: [Range<Int>] = []
        var index = 0
        var key: ArraySlice<UInt8> = []
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "\"") else {
                index += 1
                continue
            }
            let start = index + 1
            var end = start
            while end < bytes.count, bytes[end] != UInt8(ascii: "\"") {
                end += bytes[end] == UInt8(ascii: "\\") ? 2 : 1
            }
            end = min(end, bytes.count)
            index = end + 1
            // A key is followed by a colon (the writer puts none between).
            if index < bytes.count, bytes[index] == UInt8(ascii: ":") {
                key = bytes[start..<end]
                continue
            }
            if Self.structuralKeys.contains(where: { key.elementsEqual($0) }) { continue }
            ranges += matches(in: bytes, from: start, to: end)
        }
        return ranges.isEmpty ? bytes : replacing(ranges, in: bytes)
    }

    /// Fields that are the log's own structure, never a request's or response's data
    /// (docs/log-format.md).
    static let structuralKeys: [[UInt8]] = ["event", "ts", "run", "job", "task"].map {
        Array($0.utf8)
    }

    /// Whether a header's value must never be written.
    func isSecretHeader(_ name: String, in request: HTTPRequest?) -> Bool {
        request?.isSecretHeader(name) ?? SecretHeaders.isSecret(name)
    }

    // MARK: - Matching

    /// The ranges of `bytes` that hold a secret in any form, in order, overlapping ones
    /// merged: what ``scrub(bytes:)`` replaces, for a writer that puts something else there
    /// (``CurlCommand``, a variable's reference).
    func secretRanges(in bytes: [UInt8]) -> [Range<Int>] {
        guard !patterns.isEmpty else { return [] }
        let sorted = matches(in: bytes, from: 0, to: bytes.count).sorted {
            $0.lowerBound < $1.lowerBound
        }
        var merged: [Range<Int>] = []
        for range in sorted {
            if let last = merged.last, range.lowerBound < last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        return merged
    }

    /// The ranges of `bytes[from..<to]` that hold a secret in any form.
    private func matches(in bytes: [UInt8], from: Int, to: Int) -> [Range<Int>] {
        var found: [Range<Int>] = []
        let patterns = patterns
        // Decoding only shortens text: one shorter than every pattern holds none.
        guard let shortest = patterns.last?.count, to - from >= shortest else { return found }
        // The bytes as they are, searched in place: most of a log line's strings have no
        // escape, and a view of them (three arrays) cost more than the search.
        search(patterns, in: bytes, from: from, to: to, into: &found)
        guard Self.hasEscapes(bytes[from..<to]) else { return found }
        let raw = DecodedView(identity: bytes, from: from, to: to)
        // Up to two levels (a JSON body logged as JSON text), each decoding JSON escapes,
        // percent escapes or both: a secret may hold one kind itself (`ab"cd%20` is written
        // `ab\"cd%20` in a body, its `%20` its own), so decoding both at once would miss it.
        var searched: Set<[UInt8]> = [raw.bytes]
        for first in DecodedView.Escapes.allCases {
            let once = raw.decoded(first)
            guard searched.insert(once.bytes).inserted else { continue }
            search(patterns, in: once, into: &found)
            guard Self.hasEscapes(once.bytes[...]) else { continue }
            for second in DecodedView.Escapes.allCases {
                let twice = once.decoded(second)
                if searched.insert(twice.bytes).inserted {
                    search(patterns, in: twice, into: &found)
                }
            }
        }
        return found
    }

    private static func hasEscapes(_ bytes: ArraySlice<UInt8>) -> Bool {
        bytes.contains { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "\\") }
    }

    /// Each occurrence of a pattern in `bytes[from..<to]`, as the range it spans there.
    private func search(
        _ patterns: [[UInt8]], in bytes: [UInt8], from: Int, to: Int,
        into found: inout [Range<Int>]
    ) {
        for pattern in patterns where !pattern.isEmpty && pattern.count <= to - from {
            var index = from
            while let start = ByteSearch.firstIndex(of: pattern, in: bytes, from: index, to: to) {
                found.append(start..<start + pattern.count)
                index = start + pattern.count
            }
        }
    }

    /// Each occurrence of a pattern in a decoded view, as the original range it stands for.
    private func search(
        _ patterns: [[UInt8]], in view: DecodedView, into found: inout [Range<Int>]
    ) {
        var inView: [Range<Int>] = []
        search(patterns, in: view.bytes, from: 0, to: view.bytes.count, into: &inView)
        for range in inView {
            found.append(view.start[range.lowerBound]..<view.end[range.upperBound - 1])
        }
    }

    /// `bytes` with each range (merged where they overlap) replaced by the placeholder.
    private func replacing(_ ranges: [Range<Int>], in bytes: [UInt8]) -> [UInt8] {
        let sorted = ranges.sorted { $0.lowerBound < $1.lowerBound }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var position = 0
        var index = 0
        while index < sorted.count {
            var range = sorted[index]
            index += 1
            while index < sorted.count, sorted[index].lowerBound < range.upperBound {
                range = range.lowerBound..<max(range.upperBound, sorted[index].upperBound)
                index += 1
            }
            guard range.lowerBound >= position else { continue }
            output += bytes[position..<range.lowerBound]
            output += Array(Self.placeholder.utf8)
            position = range.upperBound
        }
        output += bytes[position...]
        return output
    }
}

/// The patterns of a learning ``Redactor``: the job's secrets and those learned since.
final class LearnedSecrets: Sendable {
    private let state: Locked<[[UInt8]]>
    private let short = Locked(0)

    init(known: [[UInt8]]) { state = Locked(known) }

    var patterns: [[UInt8]] { state.withLock { $0 } }
    var shortCount: Int { short.withLock { $0 } }

    func noteShort() { short.withLock { $0 += 1 } }

    func add(_ patterns: [[UInt8]]) {
        state.withLock { current in
            let fresh = patterns.filter { !current.contains($0) }
            guard !fresh.isEmpty else { return }
            current = (current + fresh).sorted { $0.count > $1.count }
        }
    }
}

/// Bytes with escapes decoded, each decoded byte knowing which original bytes it came from.
struct DecodedView {
    var bytes: [UInt8] = []
    /// For decoded byte i, the original range `start[i]..<end[i]` it stands for.
    var start: [Int] = []
    var end: [Int] = []

    init(identity source: [UInt8], from: Int, to: Int) {
        bytes = Array(source[from..<to])
        start = Array(from..<to)
        end = Array((from + 1)..<(to + 1))
    }

    private init() {}

    /// Which escapes a level of decoding reads.
    enum Escapes: CaseIterable {
        case json, percent, both
    }

    /// One level of escapes decoded: `%XX`, JSON's, or both.
    func decoded(_ escapes: Escapes = .both) -> DecodedView {
        let percent = escapes != .json
        let json = escapes != .percent
        var view = DecodedView()
        view.bytes.reserveCapacity(bytes.count)
        var index = 0
        func emit(_ decoded: [UInt8], spanning count: Int) {
            for byte in decoded {
                view.bytes.append(byte)
                view.start.append(start[index])
                view.end.append(end[index + count - 1])
            }
            index += count
        }
        while index < bytes.count {
            let byte = bytes[index]
            if percent, byte == UInt8(ascii: "%"), let value = hexValue(at: index + 1, digits: 2) {
                emit([UInt8(value)], spanning: 3)
            } else if json, byte == UInt8(ascii: "\\"), index + 1 < bytes.count,
                let (decoded, count) = jsonEscape(at: index)
            {
                emit(decoded, spanning: count)
            } else {
                emit([byte], spanning: 1)
            }
        }
        return view
    }

    private func hexValue(at index: Int, digits: Int) -> UInt32? {
        guard index + digits <= bytes.count else { return nil }
        return HexNumber.value(of: bytes[index..<index + digits])
    }

    /// The bytes a JSON escape at `index` stands for, and its length.
    private func jsonEscape(at index: Int) -> ([UInt8], Int)? {
        JSONEscape.decode(bytes, at: index)
    }
}
