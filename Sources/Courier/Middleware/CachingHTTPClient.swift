import Foundation

/// Opt-in HTTP caching for GETs: a fresh stored response (`Cache-Control: max-age`, `Expires`)
/// is answered without sending anything; a stale one with an `ETag` or `Last-Modified` is
/// revalidated with `If-None-Match`/`If-Modified-Since`, and a 304 brings the stored body
/// back as a 200. `no-store` is never stored, `no-cache` is always revalidated, and `Vary` is
/// honoured (``HTTPCachePolicy`` holds the rules).
///
/// ```swift
/// let cached = CachingHTTPClient(wrapping: CurlHTTPClient(), store: try DiskHTTPCacheStore(folder: cacheFolder))
/// ```
/// Each request can say how it wants the cache used, with its own `Cache-Control` (or
/// ``HTTPRequest/setCacheUse(_:)``): `max-stale` takes a stored response however stale, else loads;
/// `only-if-cached` never sends (offline), answering 504 when nothing stored will do;
/// `no-cache` always revalidates.
///
/// Sit it above redirects and retries, so that it sees the requests the caller makes. Requests
/// that set their own conditional fields bypass it (the caller wants the 304 itself), and the
/// credentials are part of the key, so one user's response never answers another.
public struct CachingHTTPClient<Wrapped: HTTPClient>: HTTPClient {
    public let wrapped: Wrapped
    public let store: any HTTPCacheStore
    private let time: any TimeSource

    public init(
        wrapping wrapped: Wrapped, store: any HTTPCacheStore = MemoryHTTPCacheStore(),
        time: any TimeSource = SystemTimeSource()
    ) {
        self.wrapped = wrapped
        self.store = store
        self.time = time
    }

    public func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard let key = HTTPCachePolicy.key(for: request) else {
            return try await wrapped.perform(request)
        }
        let stored = store.response(for: key).flatMap {
            HTTPCachePolicy.matchesVary($0, request) ? $0 : nil
        }
        switch HTTPCachePolicy.decide(request, stored: stored, now: time.date()) {
        case .useStored:
            // `decide` answers `.useStored` only for a stored response.
            guard let stored else { return try await wrapped.perform(request) }
            return stored.response(for: request.url).redacting(secretsOf: request)
        case .revalidate(let validators):
            var conditional = request
            validators.addConditions(to: &conditional)
            // Streamed, a 304 never reaches the reader: the stored body does, as one chunk.
            let response = try await wrapped.perform(
                conditional.attempt { status, _ in status != 304 }.request)
            guard response.status == 304, var refreshed = stored else {
                return keep(response, for: request, key: key)
            }
            // The 304's fields update the stored ones (RFC 9111 §4.3.4); the body stays.
            for field in response.headers
            where !HTTPCachePolicy.keptFromStored.contains(field.name.lowercased()) {
                refreshed.headers.replaceOrAdd(field.name, field.value)
            }
            refreshed.storedAt = time.date()
            store.store(refreshed, for: key)
            var answer = refreshed.response(for: request.url).redacting(secretsOf: request)
            answer.timings = response.timings
            answer.requestHeaders = response.requestHeaders
            answer.redirectCount = response.redirectCount
            return answer
        case .fetch:
            return keep(try await wrapped.perform(request), for: request, key: key)
        case .unsatisfiable:
            return HTTPResponse(
                status: 504, headers: ["Content-Type": "text/plain"],
                body: Data("only-if-cached: no stored response for this request".utf8),
                url: request.url
            ).redacting(secretsOf: request)
        }
    }

    /// Stores `response` when the rules allow, and returns it as it came.
    private func keep(_ response: HTTPResponse, for request: HTTPRequest, key: String)
        -> HTTPResponse
    {
        // A streamed body went to its reader: there is nothing to store.
        guard request.bodyDestination == .memory else { return response }
        guard HTTPCachePolicy.isStorable(response, for: request) else {
            if response.status != 304 { store.remove(for: key) }
            return response
        }
        var headers = response.headers
        headers.remove("Set-Cookie")
        store.store(
            CachedResponse(
                status: response.status, headers: headers, body: response.body,
                storedAt: time.date(),
                varying: HTTPCachePolicy.varying(
                    request, names: HTTPCachePolicy.varyNames(response.headers))),
            for: key)
        return response
    }
}
