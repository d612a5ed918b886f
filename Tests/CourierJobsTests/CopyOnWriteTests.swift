import Foundation
import Testing

@testable import CourierJobs

/// ``CopyOnWrite``: copies share one box until one changes; each stays the value it was.
@Suite("copy-on-write boxes")
struct CopyOnWriteTests {
    @Test("a change to a copy leaves the others as they were, whichever changes")
    func copiesStayValues() {
        var original = CopyOnWrite([1, 2])
        var copy = original
        copy.value.append(3)
        #expect(original.value == [1, 2] && copy.value == [1, 2, 3])
        original.value[0] = 9
        #expect(original.value == [9, 2] && copy.value == [1, 2, 3])
        // A box of its own is changed in place, and a copy made after sees it as it was then.
        let snapshot = original
        original.value.removeAll()
        #expect(snapshot.value == [9, 2] && original.value.isEmpty)
    }

    @Test("an expanded task's copy changes alone")
    func expandedTaskCopies() throws {
        let job = try ExpansionTests.load(
            ExpansionTests.job(tasks: #"{"id": "t", "path": "/items", "save": "a.json"}"#))
        let task = try #require(try ExpansionTests.expand(job).first)
        var changed = task
        changed.save = "b.json"
        changed.records = nil
        #expect(task.save == "a.json" && changed.save == "b.json")
        #expect(task.id == changed.id)
    }
}
