import Foundation
import Testing

@testable import CourierJobs

/// Captured values in memory, then in the spill file, read back by independent cursors.
@Suite("captured values")
struct CaptureValuesTests {
    @Test("values past the memory limit come back from the file as they went in, for every reader")
    func spillRoundTrip() throws {
        var values = CaptureValues(memoryLimit: 2)
        defer { values.release() }
        let written = ["1", "two", "", "line\nbreak", "é😀", String(repeating: "z", count: 100_000)]
        for value in written { try values.append(value) }
        #expect(values.count == written.count)
        var first = CaptureValues.Cursor()
        var second = CaptureValues.Cursor()
        var read: [String] = []
        while let value = values.next(&first) { read.append(value) }
        #expect(read == written)
        #expect(values.next(&second) == "1", "each reader has its own place")
        try values.append("late")
        #expect(values.next(&first) == "late", "a reader at the end sees what comes later")
    }

    @Test func differentValuesAreNoticed() throws {
        var same = CaptureValues(memoryLimit: 10)
        for _ in 0..<3 { try same.append("t") }
        #expect(!same.hasDifferentValues && same.first == "t")
        var mixed = CaptureValues(memoryLimit: 1)
        defer { mixed.release() }
        try mixed.append("a")
        try mixed.append("b")
        #expect(mixed.hasDifferentValues)
    }
}
