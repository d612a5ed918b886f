/// One `foreach` variable's values, in order, read as they are needed.
///
/// A concrete iterator, not an `AnyIterator`: the runner takes a value for every task, and the
/// type-erasing box cost allocations per value.
struct ForeachValues: IteratorProtocol {
    private enum State {
        case list([String], next: Int)
        /// Both bounds inclusive; the state ends after `last`, so `Int.max` cannot overflow.
        case range(next: Int, last: Int)
        case lines(LineReader)
        case finished
    }

    private var state: State

    init(_ source: ForeachSource) {
        switch source {
        case .list(let values): state = .list(values, next: 0)
        case .range(let from, let to): state = from <= to ? .range(next: from, last: to) : .finished
        case .lines(let url): state = .lines(LineReader(url: url))
        case .capture:
            // Captured values exist only while the job runs; the runner feeds them
            // (``TaskFeed``), and validation leaves such tasks alone.
            state = .finished
        }
    }

    mutating func next() -> String? {
        switch state {
        case .list(let values, let index):
            guard index < values.count else {
                state = .finished
                return nil
            }
            state = .list(values, next: index + 1)
            return values[index]
        case .range(let value, let last):
            state = value < last ? .range(next: value + 1, last: last) : .finished
            return String(value)
        case .lines(var reader):
            // Taken out of the enum first, so that reading does not copy its buffer.
            state = .finished
            guard let line = reader.next() else { return nil }
            state = .lines(reader)
            return line
        case .finished:
            return nil
        }
    }
}
