import Foundation

/// Walks the cartesian product of `foreach` variables like an odometer: the last variable
/// turns fastest.
///
/// Zipped (`"zip": true`), the variables advance together and the shortest one ends the walk;
/// validation refuses variables of different lengths (``JobValidator``).
struct CombinationIterator: IteratorProtocol {
    private let variables: [(name: String, source: ForeachSource)]
    /// The variables' names, taken once: `next()` runs for every task of a run.
    private let names: [String]
    private let zip: Bool
    private var iterators: [ForeachValues] = []
    private var current: [String] = []
    private var started = false
    private var done = false

    init(_ variables: [(name: String, source: ForeachSource)], zip: Bool = false) {
        self.variables = variables
        names = variables.map(\.name)
        self.zip = zip
    }

    mutating func next() -> [String: String]? {
        guard !done else { return nil }
        if zip, started {
            for index in iterators.indices {
                guard let value = iterators[index].next() else {
                    done = true
                    return nil
                }
                current[index] = value
            }
            return bindings()
        }
        if !started {
            started = true
            for variable in variables {
                var iterator = ForeachValues(variable.source)
                guard let first = iterator.next() else {
                    done = true
                    return nil
                }
                iterators.append(iterator)
                current.append(first)
            }
            return bindings()
        }
        var position = variables.count - 1
        while position >= 0 {
            if let value = iterators[position].next() {
                current[position] = value
                // Restart every faster-turning variable from its first value.
                for inner in (position + 1)..<variables.count {
                    var iterator = ForeachValues(variables[inner].source)
                    current[inner] = iterator.next() ?? ""
                    iterators[inner] = iterator
                }
                return bindings()
            }
            position -= 1
        }
        done = true
        return nil
    }

    private func bindings() -> [String: String] {
        var bindings = [String: String](minimumCapacity: names.count)
        for (name, value) in Swift.zip(names, current) { bindings[name] = value }
        return bindings
    }
}
