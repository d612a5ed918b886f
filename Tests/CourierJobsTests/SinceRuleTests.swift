import Courier
import Foundation
import Testing

@testable import CourierJobs

@Suite("since rule")
struct SinceRuleTests {
    @Test("the offered value: start, the kept cursor, less the lookback in its own terms")
    func offered() {
        var rule = SinceRule(source: .max("/items/*/t"), start: "S", lookback: 0)
        #expect(rule.offered(nil) == "S")
        #expect(rule.offered("2026-01-01T00:00:10Z") == "2026-01-01T00:00:10Z")
        rule.lookback = 3600
        #expect(rule.offered("2026-01-01T00:30:00Z") == "2025-12-31T23:30:00Z")
        // Written as the API wrote it: one that compares timestamps as text (Datasette, SQLite)
        // skipped records when the cursor came back in UTC.
        #expect(rule.offered("2026-01-01T02:30:00+02:00") == "2026-01-01T01:30:00+02:00")
        #expect(rule.offered("2026-11-26T05:12:53-05:00") == "2026-11-26T04:12:53-05:00")
        #expect(rule.offered("2026-01-01T01:00:00.250Z") == "2026-01-01T00:00:00.250Z")
        #expect(rule.offered("2026-01-01T01:00:00.123456Z") == "2026-01-01T00:00:00.123456Z")
        var half = rule
        half.lookback = 0.5
        #expect(half.offered("2026-01-01T01:00:00.750Z") == "2026-01-01T01:00:00.250Z")
        #expect(rule.offered("10000") == "6400", "a whole number stays whole")
        #expect(rule.offered("opaque-token") == "opaque-token", "a token has no lookback")
    }

    @Test("later: numbers as numbers, timestamps as instants, else text")
    func later() {
        #expect(SinceRule.isLater("10", than: "9"))
        #expect(!SinceRule.isLater("9.5", than: "10"))
        #expect(SinceRule.isLater("2026-01-01T01:00:00+00:00", than: "2026-01-01T02:59:00+02:00"))
        #expect(!SinceRule.isLater("2026-01-01T00:00:00Z", than: "2026-01-01T00:00:00.500Z"))
        #expect(SinceRule.isLater("b", than: "a"))
    }
}

@Suite("saved files a save template matches")
struct SavedFilesTests {
    @Test("a variable is one or more characters of one segment; hidden files are left out")
    func matching() {
        func parts(_ text: String) -> [Template.Part] { Template(text).parts }
        #expect(SavedFiles.matches("42.json", parts("{id}.json")))
        #expect(!SavedFiles.matches(".json", parts("{id}.json")), "a value is never empty")
        #expect(!SavedFiles.matches(".42.json.ABCDEF01.tmp", parts("{id}.json")))
        #expect(SavedFiles.matches("a-b-c.json", parts("{x}-{y}.json")))
        #expect(!SavedFiles.matches("42.json.bak", parts("{id}.json")))
        #expect(SavedFiles.matches(".hidden-1", parts(".hidden-{n}")))
    }
}
