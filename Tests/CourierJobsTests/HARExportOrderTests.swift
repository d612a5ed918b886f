import Courier
@testable import CourierJobs
import Foundation
import Testing

/// `export --har` lists entries oldest first, as HAR 1.2 asks: a log has its lines in the
/// order requests ended, and `import --har` makes its tasks in the archive's order.
@Suite("HAR export order")
struct HARExportOrderTests {
    static func request(_ task: String, ts: String, blockedMs: Int? = nil) -> LogLine {
        let blocked = blockedMs.map { #","blockedMs":\#($0)"# } ?? ""
        let json =
            #"{"event":"request","ts":"\#(ts)","run":"r1","job":"t","task":"\#(task)","attempt":1,"method":"GET","url":"http://h/\#(task)","status":200,"outcome":"ok","totalMs":5\#(blocked)}"#
        return LogLine(bytes: Array(json.utf8)[...])!
    }

    @Test("entries are in the order requests started, not the order their lines were written")
    func entriesByStart() throws {
        var export = HARExport()
        // Written as they ended: "slow" started first, "late" started last but waited 3 s at
        // its host before it went out, so its entry starts before "slow"'s.
        export.add(Self.request("quick", ts: "2026-11-27T10:00:01.000Z"))
        export.add(Self.request("slow", ts: "2026-11-27T10:00:00.500Z"))
        export.add(Self.request("late", ts: "2026-11-27T10:00:03.000Z", blockedMs: 3000))
        export.add(Self.request("same", ts: "2026-11-27T10:00:01.000Z"))
        let bytes = JSONWriter.bytes(export.value())
        let root = try #require(
            try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        let entries = try #require((root["log"] as? [String: Any])?["entries"] as? [[String: Any]])
        let urls = entries.compactMap { ($0["request"] as? [String: Any])?["url"] as? String }
        // Equal starts keep the log's order.
        #expect(urls == ["http://h/late", "http://h/slow", "http://h/quick", "http://h/same"])
    }
}
