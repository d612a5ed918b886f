import Courier
@testable import CourierJobs
import CourierTestSupport
import Foundation
import Testing

@Suite("foreach expansion and templating")
struct ExpansionTests {
    /// Writes a job (and any extra files) to a fresh folder and loads it. A job that reads a
    /// `lines` file reads it as it expands: `expand(_:files:)` loads and expands before the
    /// folder goes.
    static func load(
        _ json: String, files: [String: String] = [:], environment: [String: String] = [:]
    ) throws -> Job {
        let folder = try folder(json, files: files)
        defer { try? FileManager.default.removeItem(at: folder) }
        return try JobDecoder.load(
            folder.appendingPathComponent("job.json"), environment: environment)
    }

    /// The tasks of a job that reads the given files, expanded while the files are there.
    static func expand(_ json: String, files: [String: String]) throws -> [ExpandedTask] {
        let folder = try folder(json, files: files)
        defer { try? FileManager.default.removeItem(at: folder) }
        return try expand(JobDecoder.load(folder.appendingPathComponent("job.json")))
    }

    private static func folder(_ json: String, files: [String: String]) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-exp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (name, text) in files {
            try text.write(
                to: folder.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        try json.write(
            to: folder.appendingPathComponent("job.json"), atomically: true, encoding: .utf8)
        return folder
    }

    static func expand(_ job: Job) throws -> [ExpandedTask] {
        try TaskExpander(job: job).map { try $0.get() }
    }

    static func job(tasks: String, extra: String = "") -> String {
        #"{"version": 1, "name": "t", "baseURL": "http://127.0.0.1:9/api/", \#(extra) "tasks": [\#(tasks)]}"#
    }

    @Test func rangeIsInclusive() throws {
        let tasks = try Self.expand(
            try Self.load(
                Self.job(
                    tasks: #"{"id": "u{n}", "path": "/u/{n}", "foreach": {"n": {"range": [3, 6]}}}"#
                )))
        #expect(tasks.map(\.id) == ["u3", "u4", "u5", "u6"])
        #expect(tasks.first?.request.url.absoluteString == "http://127.0.0.1:9/api/u/3")
    }

    @Test func listsTakeStringsAndNumbers() throws {
        let tasks = try Self.expand(
            try Self.load(
                Self.job(
                    tasks:
                        #"{"id": "c-{c}", "path": "/c", "query": {"c": "{c}"}, "foreach": {"c": ["red", 2, "blue sky"]}}"#
                )))
        #expect(tasks.map(\.id) == ["c-red", "c-2", "c-blue sky"])
        #expect(tasks.last?.request.url.query == "c=blue%20sky")
    }

    @Test func linesSkipBlanksAndTrim() throws {
        let tasks = try Self.expand(
            Self.job(
                tasks: #"{"id": "p-{u}", "url": "{u}", "foreach": {"u": {"lines": "urls.txt"}}}"#),
            files: [
                "urls.txt":
                    "http://127.0.0.1:9/a\n\n  http://127.0.0.1:9/b  \r\nhttp://127.0.0.1:9/c"
            ])
        #expect(tasks.map(\.request.url.path) == ["/a", "/b", "/c"])
    }

    @Test func severalVariablesMakeACartesianProductLastTurningFastest() throws {
        let tasks = try Self.expand(
            Self.job(
                tasks:
                    #"{"id": "{a}-{b}-{c}", "path": "/x", "foreach": {"a": [1, 2], "b": {"lines": "b.txt"}, "c": {"range": [7, 8]}}}"#
            ),
            files: ["b.txt": "x\ny\n"])
        #expect(
            tasks.map(\.id) == [
                "1-x-7", "1-x-8", "1-y-7", "1-y-8", "2-x-7", "2-x-8", "2-y-7", "2-y-8",
            ])
    }

    @Test func anEmptySourceExpandsToNothing() throws {
        let tasks = try Self.expand(
            Self.job(
                tasks:
                    #"{"id": "e-{u}", "url": "{u}", "foreach": {"u": {"lines": "empty.txt"}}}, {"id": "other", "path": "/o"}"#
            ),
            files: ["empty.txt": "\n\n"])
        #expect(tasks.map(\.id) == ["other"])
    }

    @Test func templatesWorkInEveryPlace() throws {
        let job = try Self.load(
            Self.job(
                tasks: #"""
                    {"id": "t-{v}", "method": "PUT", "path": "/items/{v}", "query": {"q": "{v}&x"},
                     "headers": {"X-Item": "item {v}"}, "json": {"name": "{v}", "list": ["{v}", 1], "n": 2.5},
                     "save": "out/{v}.json", "foreach": {"v": ["a1"]}}
                    """#,
                extra: #""headers": {"Accept": "application/json", "X-Item": "job"},"#))
        let task = try #require(try Self.expand(job).first)
        #expect(task.id == "t-a1")
        #expect(task.request.method == .put)
        #expect(task.request.url.absoluteString == "http://127.0.0.1:9/api/items/a1?q=a1%26x")
        #expect(
            task.request.headers.values(for: "X-Item") == ["item a1"],
            "task headers override job headers")
        #expect(task.request.headers["Accept"] == "application/json")
        #expect(task.request.headers["Content-Type"] == "application/json")
        #expect(
            String(decoding: task.request.body ?? Data(), as: UTF8.self)
                == #"{"name":"a1","list":["a1",1],"n":2.5}"#)
        #expect(task.save == "out/a1.json")
    }

    @Test func urlTemplatesTakeWholeURLs() throws {
        let job = try Self.load(
            Self.job(
                tasks:
                    #"{"id": "{h}", "url": "http://{h}:9/x", "foreach": {"h": ["127.0.0.1", "localhost"]}}"#
            ))
        #expect(
            try Self.expand(job).map { $0.request.url.host ?? "" } == ["127.0.0.1", "localhost"])
    }

    /// A secret header's literal value is a secret, and so is what follows its scheme, but not
    /// the last word of a key with a space in it (trial OO: `y` was warned of as too short).
    @Test func aLiteralCredentialLosesOnlyASchemesName() throws {
        let job = try Self.load(
            Self.job(
                tasks: #"""
                    {"id": "a", "path": "/a", "headers": {"Authorization": "Token abcdefgh"}},
                    {"id": "b", "path": "/b", "headers": {"X-Api-Key": "key-v@lue&x y"}},
                    {"id": "c", "path": "/c", "headers": {"X-Api-Key": "Key ab"}}
                    """#))
        #expect(job.secrets == ["Token abcdefgh", "abcdefgh", "key-v@lue&x y", "Key ab"])
    }

    @Test func environmentValuesAreSubstitutedAndRememberedAsSecrets() throws {
        let job = try Self.load(
            Self.job(
                tasks: #"{"id": "a", "path": "/a", "headers": {"X-Key": "k=${env:KEY}"}}"#,
                extra: #""auth": {"bearer": "${env:TOKEN}"},"#),
            environment: ["KEY": "abc", "TOKEN": "tok-1"])
        let task = try #require(try Self.expand(job).first)
        #expect(task.request.headers["X-Key"] == "k=abc")
        #expect(task.request.headers["Authorization"] == "Bearer tok-1")
        #expect(job.secrets == ["abc", "tok-1"])
    }

    /// A mistyped kind would go to the server as text: it is an error, with the kind meant.
    @Test func anUnknownReferenceKindIsAnError() throws {
        let text = Self.job(
            tasks: #"""
                {"id": "a", "path": "/a", "headers": {"Authorization": "Bearer ${evn:TOKEN}"},
                 "query": {"q": "${ENV:TOKEN}", "r": "${env:TOKEN}", "s": "${nope:x} and ${x}"}}
                """#)
        let errors = try #require(throws: JobFileErrors.self) {
            try Self.load(text, environment: ["TOKEN": "tok-1"])
        }
        let described = errors.description
        #expect(described.contains(#"headers.Authorization"#), "\(described)")
        #expect(described.contains("unknown reference ${evn:…}"), "\(described)")
        #expect(described.contains("did you mean ${env:…}?"), "\(described)")
        #expect(described.contains("unknown reference ${ENV:…}"), "\(described)")
        #expect(described.contains("unknown reference ${nope:…}"), "\(described)")
        #expect(!described.contains("${x}"), "a brace without a kind is text: \(described)")
        #expect(!described.contains("tok-1"))
    }

    /// Where no reference is replaced (a key, `save`, `id`, a `foreach` list), one would go to
    /// the server or the disk as text: it is an error there too, and so is a spaced one.
    @Test func aReferenceWhereNoneIsReplacedIsAnError() throws {
        let text = Self.job(
            tasks: #"""
                {"id": "a-${env:TOKEN}", "method": "POST", "path": "/a",
                 "query": {"${evn:TOKEN}": "v"},
                 "json": {"${env:TOKEN}": 1, "ok": "${env:TOKEN}"}, "save": "${env:TOKEN}/a.json",
                 "description": "needs ${env:TOKEN}"},
                {"id": "b-{n}", "path": "/b", "foreach": {"n": ["${env:TOKEN}"]}}
                """#)
        let errors = try #require(throws: JobFileErrors.self) {
            try Self.load(text, environment: ["TOKEN": "tok-1"])
        }
        let paths = Set(errors.errors.map(\.path))
        #expect(
            paths == [
                "tasks[0].id", "tasks[0].query.${evn:TOKEN}",
                "tasks[0].json.${env:TOKEN}", "tasks[0].save", "tasks[1].foreach.n[0]",
            ], "\(errors.description)")
        #expect(errors.description.contains("not in \"save\""), "\(errors.description)")
        #expect(errors.description.contains("in a key is not replaced"), "\(errors.description)")
        #expect(!errors.description.contains("tok-1"))

        let spaced = Self.job(
            tasks:
                #"{"id": "a", "path": "/a", "headers": {"Authorization": "Bearer ${ env:TOKEN}"}}"#)
        let spacedErrors = try #require(throws: JobFileErrors.self) {
            try Self.load(spaced, environment: ["TOKEN": "tok-1"])
        }
        #expect(
            spacedErrors.description.contains("a reference has no spaces: write ${env:NAME}"),
            "\(spacedErrors.description)")

        // Typos a trial found sent as text: another separator, a space before the colon.
        for (typo, message) in [
            ("${env_public:TOKEN}", "did you mean ${env-public:…}?"),
            ("${env.public:TOKEN}", "did you mean ${env-public:…}?"),
            ("${ENV_PUBLIC:TOKEN}", "did you mean ${env-public:…}?"),
            ("${env :TOKEN}", "a reference has no spaces: write ${env:NAME}"),
            ("${env public:TOKEN}", "unknown reference"),
        ] {
            let text = Self.job(tasks: #"{"id": "a", "path": "/a", "query": {"q": "\#(typo)"}}"#)
            let errors = try #require(throws: JobFileErrors.self) {
                try Self.load(text, environment: ["TOKEN": "tok-1"])
            }
            #expect(errors.description.contains(message), "\(typo): \(errors.description)")
        }
        // `${TOKEN}` as a shell writes it: the message says how to write it.
        let shell = Self.job(tasks: #"{"id": "a", "path": "/a", "headers": {"X-K": "${TOKEN}"}}"#)
        let shellErrors = try #require(throws: JobFileErrors.self) { try Self.load(shell) }
        #expect(
            shellErrors.description.contains("for an environment variable, write ${env:TOKEN}"),
            "\(shellErrors)")
        // At the header's line and column, not its task's (a trial found it pointing at the
        // task's opening brace).
        let lines = shell.split(separator: "\n", omittingEmptySubsequences: false)
        let row = try #require(lines.firstIndex { $0.contains(#""${TOKEN}""#) })
        func column(of text: String) throws -> Int {
            let found = try #require(lines[row].range(of: text)).lowerBound
            return lines[row].distance(from: lines[row].startIndex, to: found) + 1
        }
        let error = try #require(shellErrors.errors.first)
        #expect(error.line == row + 1, "\(shellErrors)")
        #expect(
            (try column(of: #""X-K""#)...(try column(of: #""${TOKEN}""#))).contains(
                error.column ?? 0), "\(shellErrors)")
        // `<redacted>` as a key is refused too.
        let redactedKey = Self.job(
            tasks: #"{"id": "a", "path": "/a", "query": {"<redacted>": "v"}}"#)
        let keyErrors = try #require(throws: JobFileErrors.self) { try Self.load(redactedKey) }
        #expect(keyErrors.errors.map(\.path) == ["tasks[0].query.<redacted>"], "\(keyErrors)")
    }

    /// In a path, an environment value is data: its `?` and `#` do not start a query or a
    /// fragment; its `/` and `%XX` stay (a prefix, an escape of its own).
    /// In a `url`, an environment value is encoded as the part it lands in asks: in the
    /// path as in `path`; in the query as data (its `&`, `=`, `+`, `#` and spaces encoded, its
    /// `%41` kept); at the start as it is (a base URL). The whole text is made valid without
    /// Foundation's repair, which had sent `%41` as `%2541` once a space was in the URL.
    @Test func aURLEnvironmentValueIsDataWhereItLands() throws {
        let job = try Self.load(
            Self.job(
                tasks: #"""
                    {"id": "a", "url": "${env-public:BASE}/a/${env:V}?k=${env:V}&n=1#${env:V}"}
                    """#),
            environment: ["BASE": "http://127.0.0.1:9/x%2Fy", "V": "a%41b&c=d#e f+g?h"])
        let task = try #require(try Self.expand(job).first)
        #expect(
            task.request.url.absoluteString
                == "http://127.0.0.1:9/x%2Fy/a/a%41b&c=d%23e%20f+g%3Fh?k=a%41b%26c%3Dd%23e%20f%2Bg?h&n=1#a%41b&c=d%23e%20f+g?h"
        )
    }

    /// `<redacted>` is what courier writes for a secret it left out: a reference whose value
    /// holds it was copied from a log, and would send that word for the secret.
    @Test func aReferenceWhoseValueIsRedactedIsAnError() throws {
        let text = Self.job(
            tasks: #"{"id": "a", "path": "/a", "headers": {"Authorization": "Bearer ${env:T}"}}"#)
        let errors = try #require(throws: JobFileErrors.self) {
            try Self.load(text, environment: ["T": "<redacted>"])
        }
        #expect(
            errors.description.contains(
                "tasks[0].headers.Authorization: ${env:T} holds <redacted>, which courier writes for a secret it left out"
            ), "\(errors)")
        // As a URL writes it, too.
        #expect(throws: JobFileErrors.self) {
            try Self.load(text, environment: ["T": "x%3Credacted%3E"])
        }
    }

    /// A shell's `${NAME}` where it is sent as written (a value of a body, a key) is a note,
    /// not an error: `validate` warns.
    @Test func aShellReferenceInABodyIsANote() throws {
        let job = try Self.load(
            Self.job(
                tasks:
                    #"{"id": "a", "method": "POST", "path": "/a", "json": {"${KEY_1}": "${VALUE} ${total}"}}"#
            ))
        #expect(job.notes.map(\.path) == ["tasks[0].json.${KEY_1}", "tasks[0].json.${KEY_1}"])
        #expect(job.notes.map(\.message).joined().contains("${env:VALUE}"))
        #expect(job.notes.map(\.message).joined().contains("${env:KEY_1}"))
    }

    /// A `path` that holds its query: a value after the `?` is a query value, as in a `url`
    /// (a trial saw `?x=${env:V}&y=1` reach the server as three parameters).
    @Test func aPathEnvironmentValueInItsQueryIsOneValue() throws {
        let job = try Self.load(
            Self.job(tasks: #"{"id": "a", "path": "/a/${env:V}?x=${env:V}&y=1"}"#),
            environment: ["V": "a&b#c%41d e+f=g?h"])
        let task = try #require(try Self.expand(job).first)
        #expect(
            task.request.url.absoluteString
                == "http://127.0.0.1:9/api/a/a&b%23c%41d%20e+f=g%3Fh?x=a%26b%23c%41d%20e%2Bf%3Dg?h&y=1"
        )
    }

    @Test func aPathEnvironmentValueKeepsItsQuestionMarkInThePath() throws {
        let job = try Self.load(
            Self.job(tasks: #"{"id": "a", "path": "/a/${env:SEG}/b", "query": {"k": "v"}}"#),
            environment: ["SEG": "x/y?z=1#w%41"])
        let task = try #require(try Self.expand(job).first)
        #expect(
            task.request.url.absoluteString == "http://127.0.0.1:9/api/a/x/y%3Fz=1%23w%41/b?k=v")
    }

    /// The variable not set is the one error: not also an empty URL and every path under it.
    @Test func anUnsetBaseURLVariableIsOneError() throws {
        let text =
            #"{"version": 1, "name": "s", "baseURL": "${env-public:NOT_SET_HERE}", "tasks": [{"id": "a", "path": "/a"}, {"id": "b", "path": "/b"}]}"#
        let errors = try #require(throws: JobFileErrors.self) { try Self.load(text) }
        #expect(errors.errors.count == 1, "\(errors.description)")
        #expect(errors.description.contains("NOT_SET_HERE is not set"), "\(errors.description)")
    }

    @Test func errorsNeverQuoteEnvironmentValues() throws {
        let secret = "sekret-\(UUID().uuidString)"
        let badBase =
            #"{"version": 1, "name": "s", "baseURL": "${env:BASE}", "tasks": [{"id": "a", "path": "/a"}]}"#
        let decodeErrors = try #require(throws: JobFileErrors.self) {
            try Self.load(badBase, environment: ["BASE": secret])
        }
        #expect(
            decodeErrors.description.contains(
                #"baseURL: expected an absolute http or https URL, found "<redacted>""#))
        #expect(!decodeErrors.description.contains(secret))

        let badURL =
            #"{"version": 1, "name": "s", "tasks": [{"id": "a{n}", "url": "${env:BASE}/{n}", "foreach": {"n": ["x"]}}]}"#
        let job = try Self.load(badURL, environment: ["BASE": secret])
        let expansionErrors = try #require(throws: JobFileErrors.self) {
            try JobValidator.validate(job)
        }
        #expect(expansionErrors.description.contains("tasks[0].url"))
        #expect(!expansionErrors.description.contains(secret))
    }

    @Test func validatorCountsTasksAndFindsDuplicates() throws {
        let job = try Self.load(
            Self.job(
                tasks:
                    #"{"id": "x{n}", "path": "/x", "foreach": {"n": {"range": [1, 1000]}}}, {"id": "x500", "path": "/y"}"#
            ))
        let errors = try #require(throws: JobFileErrors.self) { try JobValidator.validate(job) }
        #expect(errors.errors.map(\.path) == ["tasks[1].id"])
        #expect(errors.description.contains(#"duplicate task id "x500""#))
    }

    @Test func aLineFileIsStreamedNotHeld() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-million-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // The lines come through a named pipe, which holds 64 KiB: the writer can only stay a
        // little ahead of the reader. A reader that held the file whole could produce its first
        // task only after all 200,000 lines (about 20 MB) were written. (A million lines took a
        // minute of the unit tests' run and proved nothing more.)
        // (A job file naming a FIFO is refused, since a run reads its lines more than once:
        // the job is read with a file there, which the pipe then takes the place of.)
        let pipe = folder.appendingPathComponent("ids.txt")
        try Data().write(to: pipe)
        let url = folder.appendingPathComponent("job.json")
        try Self.job(
            tasks: #"{"id": "{id}", "path": "/x/{id}", "foreach": {"id": {"lines": "ids.txt"}}}"#
        )
        .write(to: url, atomically: true, encoding: .utf8)
        let job = try JobDecoder.load(url)
        try FileManager.default.removeItem(at: pipe)
        #expect(mkfifo(pipe.path, 0o600) == 0)

        let written = PipeWriter.start(path: pipe.path, lines: 200_000)
        let (count, writtenAtFirstTask, last) = try await OffPool.run {
            () throws -> (Int, Int, String) in
            var count = 0
            var writtenAtFirst = 0
            var last = ""
            for result in TaskExpander(job: job) {
                let task = try result.get()
                count += 1
                if count == 1 { writtenAtFirst = written.lines }
                if count == 200_000 { last = task.id }
            }
            return (count, writtenAtFirst, last)
        }
        #expect(count == 200_000)
        #expect(last.hasPrefix("id-199999-"))
        #expect(
            writtenAtFirstTask < 20_000,
            "the first task came after \(writtenAtFirstTask) lines were written")
    }
}

/// Writes numbered lines of about 100 bytes into a named pipe from a thread of its own.
final class PipeWriter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    var lines: Int { lock.withLock { count } }

    static func start(path: String, lines total: Int) -> PipeWriter {
        let writer = PipeWriter()
        // If the reader stops early, writes fail with EPIPE instead of killing the test process.
        signal(SIGPIPE, SIG_IGN)
        Thread.detachNewThread {
            guard let handle = FileHandle(forWritingAtPath: path) else { return }
            let padding = String(repeating: "p", count: 90)
            for block in 0..<(total / 1_000) {
                var chunk = ""
                for line in 0..<1_000 { chunk += "id-\(block * 1_000 + line)-\(padding)\n" }
                guard (try? handle.write(contentsOf: Data(chunk.utf8))) != nil else { break }
                writer.lock.withLock { writer.count += 1_000 }
            }
            try? handle.close()
        }
        return writer
    }
}

/// Runs blocking or CPU-heavy test work on a thread of its own.
enum OffPool {
    static func run<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws
        -> Value
    {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
        }
    }
}
