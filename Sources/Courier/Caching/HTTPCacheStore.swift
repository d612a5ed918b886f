import Foundation

/// Where ``CachingHTTPClient`` keeps responses: ``MemoryHTTPCacheStore`` or
/// ``DiskHTTPCacheStore``, or your own. Keys are hex digests, fit for file names.
public protocol HTTPCacheStore: Sendable {
    /// The response stored under `key`, if any.
    func response(for key: String) -> CachedResponse?
    /// Stores `response` under `key`, replacing what was there.
    func store(_ response: CachedResponse, for key: String)
    /// Forgets `key`.
    func remove(for key: String)
}
