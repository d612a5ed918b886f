import Courier
import CourierTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// Holds an exclusive flock on a file, as another courier run would.
final class FileLockHolder {
    private let descriptor: Int32

    /// Locks the file at `path` (made when missing), or the folder itself with `folder`;
    /// `shared` takes a shared lock, as a shard run takes its job's output folder.
    init(path: String, folder: Bool = false, shared: Bool = false) throws {
        descriptor =
            folder ? open(path, O_RDONLY | O_DIRECTORY) : open(path, O_RDWR | O_CREAT, 0o644)
        guard descriptor >= 0, flock(descriptor, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) == 0 else {
            throw CocoaError(.fileWriteUnknown)
        }
    }

    func release() {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}

enum URLEncoding {
    static func encode(_ text: String) -> String { URLBuilder.percentEncode(text) }
}

/// Reads a pipe to its end on a thread of its own, off the cooperative pool.
enum OffPoolRead {
    static func all(_ handle: FileHandle) async throws -> String {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let data = handle.readDataToEndOfFile()
                continuation.resume(returning: String(decoding: data, as: UTF8.self))
            }
        }
    }
}

/// A blocking GET decoded as a JSON object, for threads that must not wait on the cooperative
/// pool (the completion handler runs on URLSession's own queue).
enum BlockingFetch {
    static func json(_ url: URL) -> [String: Any]? {
        // The test servers' bookkeeping goes over a socket of its own (``LoopbackHTTP``).
        if ProbeClient.isPlainLoopback(url) {
            guard let (_, data) = try? LoopbackHTTP.exchange("GET", url) else { return nil }
            return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        }
        let done = DispatchSemaphore(value: 0)
        let result = LockedBox<Data?>(nil)
        var request = URLRequest(url: url, timeoutInterval: 5)
        request.cachePolicy = .reloadIgnoringLocalAndRemoteCacheData
        let task = session.dataTask(with: request) { data, _, _ in
            result.set(data)
            done.signal()
        }
        task.resume()
        guard done.wait(timeout: .now() + 6) == .success, let data = result.get() else {
            task.cancel()
            return nil
        }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }

    // URLSession is thread-safe; it is not marked Sendable in FoundationNetworking.
    private nonisolated(unsafe) static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        return URLSession(configuration: configuration)
    }()
}

/// A value handed from one thread to another.
final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func set(_ newValue: Value) { lock.withLock { value = newValue } }
    func get() -> Value { lock.withLock { value } }
}

/// Waits until the fixture server has recorded `count` requests under `key` (a hang guard of
/// 300 s).
enum ServerArrivals {
    static func wait(for count: Int, key: String, on server: FixtureServer) async throws {
        let url = server.url("/hits?key=\(key)")
        let deadline = ContinuousClock.now + .seconds(300)
        while (BlockingFetch.json(url)?["count"] as? Int ?? 0) < count {
            guard ContinuousClock.now < deadline else {
                Issue.record("\(count) requests never reached the server")
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

/// Waits for an event off the cooperative pool: a test's polling on the pool can be starved
/// for tens of seconds while the parallel pass fills the pool's few threads with blocking
/// work, and a run it should act on in time goes on without it.
enum OffPool {
    /// Looks at `condition` every 20 ms on a thread of its own (`seconds` at most: a hang
    /// guard), then runs `action` there; whether the condition held.
    static func when(
        _ condition: @escaping @Sendable () -> Bool, seconds: Double = 300,
        then action: @escaping @Sendable () -> Void = {}
    ) async -> Bool {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let deadline = Date().addingTimeInterval(seconds)
                while Date() < deadline {
                    if condition() {
                        action()
                        continuation.resume(returning: true)
                        return
                    }
                    Thread.sleep(forTimeInterval: 0.02)
                }
                continuation.resume(returning: false)
            }
        }
    }
}
