import Courier
import Foundation
import Testing

@testable import CourierJobs

#if canImport(Glibc)
    import Glibc
#endif

/// `"write": "merge"`'s external merge (``RecordsMerge``): sorted runs spilled at a few bytes
/// each so that every path is taken (spills, passes over more runs than the fan-in, the merge
/// with the existing file, its slow path), checked against a dictionary model.
@Suite("records merge")
struct RecordsMergeTests {
    /// A folder for scratch files and the files merged, removed after the test.
    final class Scratch {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-merge-\(UUID().uuidString)")
        init() throws {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        deinit { try? FileManager.default.removeItem(at: folder) }

        /// A file holding `text`, open for reading.
        func file(_ text: String) throws -> Int32 {
            let url = folder.appendingPathComponent(UUID().uuidString)
            try Data(text.utf8).write(to: url)
            return open(url.path, O_RDONLY)
        }

        func output() -> Int32 {
            open(folder.appendingPathComponent(UUID().uuidString).path, O_RDWR | O_CREAT, 0o644)
        }

        static func contents(_ descriptor: Int32) -> String {
            lseek(descriptor, 0, SEEK_SET)
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, 4096) }
                if count <= 0 { break }
                bytes += chunk[0..<count]
            }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// Part lines (`+KEY<TAB>RECORD`, `-KEY<TAB>`) for records `{"id":K,"v":V}`; `nil` is a
    /// tombstone.
    static func lines(_ changes: [(Int, Int?)]) -> [String] {
        changes.map { key, value in
            value.map { "+\(key)\t{\"id\":\(key),\"v\":\($0)}" } ?? "-\(key)\t"
        }
    }

    static func merge(
        existing: String?, _ lines: [String], runBytes: Int, fanIn: Int, scratch: Scratch
    ) throws -> (String, RecordsMerge.Summary) {
        let output = scratch.output()
        defer { close(output) }
        let existingDescriptor = try existing.map { try scratch.file($0) }
        defer { if let existingDescriptor { close(existingDescriptor) } }
        let summary = try RecordsMerge.merge(
            existing: existingDescriptor, path: "users.jsonl", pointer: "/id", into: output,
            limits: RecordsMerge.Limits(runBytes: runBytes, fanIn: fanIn),
            makeScratch: { () throws(FileError) in try ScratchFile.make(in: scratch.folder) }
        ) { (merge) throws(RecordsMerge.Failure) in
            for line in lines {
                var bytes = Array(line.utf8)
                try bytes.withUnsafeMutableBytes { raw in
                    Result { () throws(RecordsMerge.Failure) in
                        try merge.add(UnsafeRawBufferPointer(raw))
                    }
                }.get()
                bytes.removeAll()
            }
        }
        return (Scratch.contents(output), summary)
    }

    @Test("the last record of a key wins, a tombstone removes it, and the file is sorted by key")
    func lastWinsWithinARun() throws {
        let scratch = try Scratch()
        let (text, summary) = try Self.merge(
            existing: nil,
            Self.lines([(3, 1), (1, 1), (3, 2), (2, 1), (1, nil), (10, 1), (2, 2), (9, 1)]),
            runBytes: 1 << 20, fanIn: 64, scratch: scratch)
        #expect(
            text == """
                {"id":2,"v":2}
                {"id":3,"v":2}
                {"id":9,"v":1}
                {"id":10,"v":1}

                """)
        #expect(summary.spilled == 0)
        #expect(summary.added == 8)
    }

    @Test("runs of a few bytes spill, more runs than the fan-in merge in passes, in order")
    func spillsAndPasses() throws {
        let scratch = try Scratch()
        // Key 5 changes in many runs: the last change wins, whatever run it is in.
        var changes: [(Int, Int?)] = []
        for round in 0..<30 {
            changes.append((5, round))
            changes.append((round % 7, round))
            if round % 4 == 3 { changes.append((round % 7, nil)) }
        }
        changes.append((5, 999))
        let (text, summary) = try Self.merge(
            existing: nil, Self.lines(changes), runBytes: 120, fanIn: 3, scratch: scratch)
        #expect(summary.spilled > 9, "every run spilled: \(summary.spilled)")
        #expect(text == Self.model(existing: [:], changes))
    }

    @Test("the existing sorted file merges with the new records; removed keys are counted")
    func mergesWithTheFile() throws {
        let scratch = try Scratch()
        let existing = (1...6).map { "{\"id\":\($0),\"v\":0,\"kept\":\"as written\"}\n" }.joined()
        let changes: [(Int, Int?)] = [(2, 5), (4, nil), (7, 1), (0, 1), (6, nil), (6, 3)]
        let (text, summary) = try Self.merge(
            existing: existing, Self.lines(changes), runBytes: 60, fanIn: 2, scratch: scratch)
        #expect(
            text == """
                {"id":0,"v":1}
                {"id":1,"v":0,"kept":"as written"}
                {"id":2,"v":5}
                {"id":3,"v":0,"kept":"as written"}
                {"id":5,"v":0,"kept":"as written"}
                {"id":6,"v":3}
                {"id":7,"v":1}

                """)
        #expect(summary.removed == 1, "key 4; key 6 came back")
    }

    @Test(
        "a file out of key order (or with a key twice) is merged through the sort, its later line winning"
    )
    func unsortedFileFallsBack() throws {
        let scratch = try Scratch()
        let existing = """
            {"id":9,"v":"a"}
            {"id":2,"v":"b"}

            {"id":9,"v":"c"}
            """
        let (text, _) = try Self.merge(
            existing: existing, Self.lines([(3, 1)]), runBytes: 1 << 20, fanIn: 4,
            scratch: scratch)
        #expect(
            text == """
                {"id":2,"v":"b"}
                {"id":3,"v":1}
                {"id":9,"v":"c"}

                """)
    }

    @Test("a line of the file without a key is refused, naming the line")
    func fileLineWithoutKey() throws {
        let scratch = try Scratch()
        #expect {
            _ = try Self.merge(
                existing: "{\"id\":1}\n{\"name\":\"x\"}\n", Self.lines([(3, 1)]),
                runBytes: 1 << 20, fanIn: 4, scratch: scratch)
        } throws: { error in
            guard case .existingLine(let number, _, let pointer) = error as? RecordsMerge.Failure
            else { return false }
            return number == 2 && pointer == "/id"
        }
    }

    @Test("random changes over many run sizes agree with a dictionary", arguments: [40, 200, 5000])
    func randomAgainstModel(runBytes: Int) throws {
        let scratch = try Scratch()
        var generator = LCG(seed: UInt64(runBytes))
        var existing: [Int: Int] = [:]
        for key in stride(from: 0, to: 60, by: 3) { existing[key] = 1000 + key }
        let existingText = existing.keys.sorted().map { "{\"id\":\($0),\"v\":\(existing[$0]!)}\n" }
            .joined()
        var changes: [(Int, Int?)] = []
        for step in 0..<400 {
            let key = Int(generator.next() % 80) - 10
            changes.append((key, generator.next() % 5 == 0 ? nil : step))
        }
        for fanIn in [2, 3, 64] {
            let (text, _) = try Self.merge(
                existing: existingText, Self.lines(changes), runBytes: runBytes, fanIn: fanIn,
                scratch: scratch)
            #expect(text == Self.model(existing: existing, changes), "fan-in \(fanIn)")
        }
    }

    /// What a merge must write: a dictionary, changed in order, written by key order.
    static func model(existing: [Int: Int], _ changes: [(Int, Int?)]) -> String {
        var lines: [Int: String] = existing.mapValues { "{\"id\":K,\"v\":\($0)}" }
        for key in lines.keys {
            lines[key] = lines[key]!.replacingOccurrences(of: "K", with: "\(key)")
        }
        for (key, value) in changes {
            lines[key] = value.map { "{\"id\":\(key),\"v\":\($0)}" }
        }
        return lines.keys.sorted().map { lines[$0]! + "\n" }.joined()
    }

    struct LCG {
        var state: UInt64
        init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }
        mutating func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
    }
}

@Suite("records keys and lines")
struct RecordKeyTests {
    @Test("integers by value first (negative ones too), then every other key by its bytes")
    func order() {
        let keys = [
            "-10", "-9", "-1", "0", "2", "9", "10", "123456789012345678901", "\"10\"",
            "\"9\"", "\"a\"", "1.5", "true",
        ]
        let shuffled = keys.reversed().map { Array($0.utf8) }
        let sorted = shuffled.sorted { RecordKey.compare($0, $1) < 0 }
        #expect(
            sorted.map { String(decoding: $0, as: UTF8.self) }
                == keys.sorted {
                    RecordKey.compare(Array($0.utf8), Array($1.utf8)) < 0
                })
        #expect(
            sorted.prefix(7).map { String(decoding: $0, as: UTF8.self) } == Array(keys.prefix(7)))
        #expect(RecordKey.compare(Array("1".utf8), Array("\"1\"".utf8)) != 0, "42 is not \"42\"")
    }

    @Test("numbers are one key however they are written, when they are whole")
    func canonicalNumbers() {
        for (written, canonical) in [
            ("1.0", "1"), ("1e2", "100"), ("-0", "0"), ("7", "7"), ("1.5", "1.5"),
            ("123456789012345678901", "123456789012345678901"),
        ] {
            #expect(
                String(decoding: RecordKey.canonicalNumber(Array(written.utf8)), as: UTF8.self)
                    == canonical, "\(written)")
        }
    }

    @Test("the scanner finds the key the parser finds, through members, indexes and escapes")
    func scannerAgreesWithParser() throws {
        let cases: [(String, String)] = [
            (#"{"id":7,"x":[1,{"id":3}]}"#, "/id"),
            (#"{"x":[1,{"id":3}],"id":"a\"b"}"#, "/id"),
            (#"{ "a" : { "b\/c" : [ 10 , 20 , 30 ] } }"#, "/a/b~1c/1"),
            (#"{"a":{"b/c":[10,20,30]}}"#, "/a/b~1c/-1"),
            (#"{"tags":["x","y"],"id":{"k":[1,2]}}"#, "/id"),
            (#"{"id":1e2}"#, "/id"),
            (#"{"id":"line\u2028sep"}"#, "/id"),
            (#"{"id":null}"#, "/id"),
            (#"{"name":"no id"}"#, "/id"),
            (#"{"id":true,"id2":false}"#, "/id2"),
        ]
        for (line, pointer) in cases {
            let node = try JSONParser.parse(line)
            let expected = JSONPointer.resolve(pointer, in: node).flatMap(RecordKey.canonical)
            let found = Array(line.utf8).withUnsafeBytes {
                RecordKeyScanner(pointer: pointer).key(in: $0)
            }
            #expect(found == expected, "\(line) at \(pointer)")
        }
    }

    /// A line whose key reads but which is not one whole value (cut, or two lines run
    /// together by a damaged byte) has no key: the merge refuses the file instead of keeping
    /// it as a record.
    @Test("a line that is not one whole value has no key, however well its key reads")
    func brokenLinesHaveNoKey() {
        let lines = [
            #"{"id":5000,"name":garbage not json"#,
            #"{"id":74,"at":"2026-03-03T02:14:02XXXX+75\#t{"id":75,"at":"x"}"#,
            #"{"id":1,"name":"cut"#,
            #"{"id":1} {"id":2}"#,
            #"{"id":1,"x":[1,2}"#,
        ]
        for line in lines {
            let found = Array(line.utf8).withUnsafeBytes {
                RecordKeyScanner(pointer: "/id").key(in: $0)
            }
            #expect(found == nil, "\(line)")
        }
        let whole = Array(#"  {"id":1,"x":[1,2]}  "#.utf8).withUnsafeBytes {
            RecordKeyScanner(pointer: "/id").key(in: $0)
        }
        #expect(whole == Array("1".utf8))
    }

    static let rule = RecordsRule(
        from: "/items/*", to: "r.jsonl", write: .merge, key: "/id", deleted: "/deleted")

    static func partLines(_ body: String, rule: RecordsRule = rule) throws -> String {
        var output: [UInt8] = []
        _ = try rule.partLines(of: try JSONParser.parse(body), into: &output)
        return String(decoding: output, as: UTF8.self)
    }

    @Test("merge part lines: the canonical key, tombstones by the deleted field's truth")
    func mergeLines() throws {
        let body = #"""
            {"items": [{"id": 1, "n": "{{a}}"}, {"id": "1", "deleted": false},
                       {"id": 2, "deleted": true}, {"id": 3, "deleted": "2024-01-01"},
                       {"id": 4, "deleted": 0}, {"id": 5.0, "deleted": null}, {"id": 6, "deleted": ""}]}
            """#
        #expect(
            try Self.partLines(body) == """
                +1\t{"id":1,"n":"{{a}}"}
                +"1"\t{"id":"1","deleted":false}
                -2\t
                -3\t
                +4\t{"id":4,"deleted":0}
                +5\t{"id":5.0,"deleted":null}
                +6\t{"id":6,"deleted":""}

                """)
    }

    @Test("shaping: where keeps, select, drop and rename reshape, add comes last; tombstones pass")
    func shapedLines() throws {
        var rule = Self.rule
        rule.shaping = RecordShaping(
            conditions: [("/state", JSONNode(.string("open")))], select: ["id", "title", "n", "x"],
            drop: ["x"], rename: [("n", "count")],
            add: [("parent", "{id}"), ("zip", "{zip}"), ("note", "from {id}")])
        let added = rule.shaping.added(["id": "42", "zip": "01234"])
        let body = #"""
            {"items": [{"n": 2, "state": "open", "title": "a", "id": 1, "x": 0},
                       {"id": 2, "state": "closed", "title": "b"},
                       {"id": 3, "deleted": true},
                       {"id": 4, "state": "open", "count": 9, "n": 1}]}
            """#
        var output: [UInt8] = []
        _ = try rule.partLines(of: try JSONParser.parse(body), added: added, into: &output)
        #expect(
            String(decoding: output, as: UTF8.self) == """
                +1	{"id":1,"title":"a","count":2,"parent":42,"zip":"01234","note":"from 42"}
                -3	
                +4	{"id":4,"count":1,"parent":42,"zip":"01234","note":"from 42"}

                """)
        var plain = Self.rule
        plain.shaping = RecordShaping(select: ["id"])
        #expect(throws: RecordsProblem.self) {
            try Self.partLines(#"{"items": [{"id": 1}, 7]}"#, rule: plain)
        }
        #expect(rule.settings != Self.rule.settings, "a part shaped otherwise is not reused")
        #expect(
            try Self.partLines(#"{"items": [{"id": 1, "b": 2, "a": 1}]}"#)
                == "+1\t{\"id\":1,\"b\":2,\"a\":1}\n", "unshaped: as it came")
    }

    /// Trial PPP: renames applied one after another lost a member of a chain, kept neither
    /// side of a swap, and hung on the order of the keys.
    @Test("renames happen all at once: a chain moves both members, a swap swaps them")
    func renamesAtOnce() throws {
        let body = #"{"items": [{"id": 1, "name": "N", "title": "T", "updated": "U"}]}"#
        for pairs in [
            [("name", "title"), ("title", "label")], [("title", "label"), ("name", "title")],
        ] {
            var chain = Self.rule
            chain.shaping = RecordShaping(rename: pairs)
            #expect(
                try Self.partLines(body, rule: chain)
                    == "+1\t{\"id\":1,\"title\":\"N\",\"label\":\"T\",\"updated\":\"U\"}\n")
        }
        var swap = Self.rule
        swap.shaping = RecordShaping(rename: [("name", "title"), ("title", "name")])
        #expect(
            try Self.partLines(body, rule: swap)
                == "+1\t{\"id\":1,\"title\":\"N\",\"name\":\"T\",\"updated\":\"U\"}\n")
        var onto = Self.rule
        onto.shaping = RecordShaping(rename: [("name", "updated")])
        #expect(
            try Self.partLines(body, rule: onto)
                == "+1\t{\"id\":1,\"updated\":\"N\",\"title\":\"T\"}\n", "replaced")
    }

    @Test("where records are missing, and a record without a key")
    func problems() throws {
        #expect(try Self.partLines(#"{"items": null}"#) == "")
        #expect(try Self.partLines(#"{"items": []}"#) == "")
        #expect(throws: RecordsProblem.self) { try Self.partLines(#"{"data": []}"#) }
        #expect(throws: RecordsProblem.self) { try Self.partLines(#"{"items": {"id": 1}}"#) }
        #expect(throws: RecordsProblem.self) { try Self.partLines(#"{"items": [{"name": 1}]}"#) }
        let whole = RecordsRule(from: "", to: "r.jsonl", write: .append)
        #expect(try Self.partLines(#"{"id": 1}"#, rule: whole) == "{\"id\":1}\n")
        let one = RecordsRule(from: "/user", to: "r.jsonl", write: .replace)
        #expect(try Self.partLines(#"{"user": null}"#, rule: one) == "")
        #expect(throws: RecordsProblem.self) { try Self.partLines(#"{}"#, rule: one) }
    }

    @Test("task ids in natural order: numbers by value")
    func naturalOrder() {
        let ids = ["user-10", "user-9", "a", "user-010", "user-2", "b-1", "user-1x"]
        #expect(
            ids.sorted(by: NaturalOrder.less)
                == ["a", "b-1", "user-1x", "user-2", "user-9", "user-010", "user-10"])
    }
}
