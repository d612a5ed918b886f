/// A value kept in one shared box until a copy of it changes (copy-on-write), so that copying
/// what holds it costs one reference count instead of one per field.
///
/// ``ExpandedTask`` and ``JobRunner/AttemptResult`` keep their fields in one: a task and its
/// result pass through the feed, the slot, the page loop and its observers, and each copy of
/// a few hundred bytes of fields took a slot of its own in the task's async frame.
struct CopyOnWrite<Value: Sendable>: @unchecked Sendable {
    // Unchecked: the box is changed only through `value`'s `_modify`, after it made the box
    // this copy's own; a box two copies share is never written.
    private final class Box {
        var value: Value
        init(_ value: Value) { self.value = value }
    }

    private var box: Box

    init(_ value: Value) {
        box = Box(value)
    }

    /// The value; changing it first gives this copy a box of its own when others share it.
    var value: Value {
        get { box.value }
        _modify {
            if !isKnownUniquelyReferenced(&box) { box = Box(box.value) }
            yield &box.value
        }
    }
}
