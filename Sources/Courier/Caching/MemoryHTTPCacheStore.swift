import Foundation

/// An in-memory ``HTTPCacheStore`` holding at most `maxBytes` of bodies; past that, the oldest
/// stored entries go first.
public final class MemoryHTTPCacheStore: HTTPCacheStore {
    private let maxBytes: Int
    private let state = Locked<(entries: [String: CachedResponse], order: [String], bytes: Int)>(
        ([:], [], 0))

    public init(maxBytes: Int = 32 << 20) { self.maxBytes = maxBytes }

    public func response(for key: String) -> CachedResponse? {
        state.withLock { $0.entries[key] }
    }

    public func store(_ response: CachedResponse, for key: String) {
        guard response.body.count <= maxBytes else { return }
        state.withLock { state in
            if let old = state.entries.removeValue(forKey: key) {
                state.bytes -= old.body.count
                state.order.removeAll { $0 == key }
            }
            while state.bytes + response.body.count > maxBytes, !state.order.isEmpty {
                let oldest = state.order.removeFirst()
                state.bytes -= state.entries.removeValue(forKey: oldest)?.body.count ?? 0
            }
            state.entries[key] = response
            state.order.append(key)
            state.bytes += response.body.count
        }
    }

    public func remove(for key: String) {
        state.withLock { state in
            guard let old = state.entries.removeValue(forKey: key) else { return }
            state.bytes -= old.body.count
            state.order.removeAll { $0 == key }
        }
    }
}
