import Courier
import Foundation

/// Where a job keeps the records of tasks that are done but not yet in their file:
/// `outputDir/.courier/records/ID/`, one folder per records file (ID: 16 hex digits of the
/// FNV-1a hash of its path), one part per task and run in it:
///
/// - `KEY.RUN.part`: KEY is the task's key (``FNV1a/taskKey(job:task:)``, 16 hex digits), RUN
///   the run that wrote it. Its first line says whose it is (``Header``); the rest are the
///   task's part lines (``RecordsRule/partLines(of:into:)``) in page order. A run's own parts
///   never share a name with an earlier run's, so finishing an interrupted commit (which
///   removes the parts of the runs it names) cannot touch them.
/// - `commit`: while a file is being replaced, what the new file is and which runs' parts it
///   holds (``RecordsCommit``).
struct RecordsStore: Sendable {
    let outputDir: URL
    let job: String

    /// `outputDir/.courier/records`.
    var root: URL { outputDir.appendingPathComponent(".courier/records") }

    /// The folder of the parts of the records file at `target` (relative to `outputDir`).
    func folder(for target: String) -> URL {
        root.appendingPathComponent(Self.hex(FNV1a.hash(target.utf8)))
    }

    func partName(task: String, run: String) -> String {
        "\(Self.hex(FNV1a.taskKey(job: job, task: task))).\(run).part"
    }

    static let commitName = "commit"

    /// The task key and the run of a part's name; `nil` for any other name.
    static func parsePartName(_ name: String) -> (key: UInt64, run: String)? {
        guard name.hasSuffix(".part"), !name.hasPrefix(".") else { return nil }
        let fields = name.dropLast(".part".count).split(separator: ".")
        guard fields.count == 2, fields[0].utf8.count == 16, let key = UInt64(fields[0], radix: 16),
            !fields[1].isEmpty
        else { return nil }
        return (key, String(fields[1]))
    }

    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits
    }

    /// The first line of a part: the task, the records file and the settings it was written
    /// under (``RecordsRule/settings``).
    struct Header: Equatable {
        var task: String
        var target: String
        var settings: String

        var line: [UInt8] {
            var bytes = JSONWriter.bytes(
                .object([
                    ("task", .string(task)), ("target", .string(target)),
                    ("settings", .string(settings)),
                ]))
            bytes.append(0x0A)
            return bytes
        }

        init(task: String, target: String, settings: String) {
            self.task = task
            self.target = target
            self.settings = settings
        }

        init?(_ line: UnsafeRawBufferPointer) {
            guard let root = try? JSONParser.parse(Array(line)),
                case .object(let members) = root.value
            else { return nil }
            var fields: [String: String] = [:]
            for member in members {
                if case .string(let text) = member.node.value { fields[member.key] = text }
            }
            guard let task = fields["task"], let target = fields["target"],
                let settings = fields["settings"]
            else { return nil }
            self.init(task: task, target: target, settings: settings)
        }
    }
}

/// Task ids in natural order: runs of digits compare by value (`user-9` before `user-10`),
/// other text by bytes; ids equal that way compare by bytes. The order in which a records file
/// gets its tasks' records, the same whichever task finished first.
enum NaturalOrder {
    static func less(_ a: String, _ b: String) -> Bool {
        let order = compare(Array(a.utf8), Array(b.utf8))
        return order != 0 ? order < 0 : Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8))
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    private static func compare(_ a: [UInt8], _ b: [UInt8]) -> Int {
        var i = 0
        var j = 0
        while i < a.count, j < b.count {
            if isDigit(a[i]), isDigit(b[j]) {
                var iEnd = i
                while iEnd < a.count, isDigit(a[iEnd]) { iEnd += 1 }
                var jEnd = j
                while jEnd < b.count, isDigit(b[jEnd]) { jEnd += 1 }
                var iStart = i
                while iStart < iEnd - 1, a[iStart] == 0x30 { iStart += 1 }
                var jStart = j
                while jStart < jEnd - 1, b[jStart] == 0x30 { jStart += 1 }
                let aDigits = a[iStart..<iEnd]
                let bDigits = b[jStart..<jEnd]
                if aDigits.count != bDigits.count { return aDigits.count < bDigits.count ? -1 : 1 }
                if aDigits != bDigits { return aDigits.lexicographicallyPrecedes(bDigits) ? -1 : 1 }
                i = iEnd
                j = jEnd
                continue
            }
            if a[i] != b[j] { return a[i] < b[j] ? -1 : 1 }
            i += 1
            j += 1
        }
        return a.count - i == b.count - j ? 0 : (a.count - i < b.count - j ? -1 : 1)
    }
}
