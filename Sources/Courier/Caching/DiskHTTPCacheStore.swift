import Foundation

/// An ``HTTPCacheStore`` in a folder, one file per response (`<key>.cache`: a line of JSON
/// metadata, then the body), each replaced atomically, so that a cache survives restarts and a
/// crash never leaves half an entry. An entry that cannot be read is treated as absent.
public struct DiskHTTPCacheStore: HTTPCacheStore {
    public let folder: URL

    /// - Parameter folder: created when missing.
    public init(folder: URL) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        self.folder = folder
    }

    private func file(_ key: String) -> URL { folder.appendingPathComponent("\(key).cache") }

    public func response(for key: String) -> CachedResponse? {
        guard let data = try? Data(contentsOf: file(key)),
            let newline = data.firstIndex(of: 0x0A),
            let meta = try? JSONSerialization.jsonObject(with: data[..<newline]) as? [String: Any],
            let status = meta["status"] as? Int,
            let storedAt = meta["storedAt"] as? Double,
            let fields = meta["headers"] as? [[String]],
            let varying = meta["varying"] as? [String: String]
        else { return nil }
        return CachedResponse(
            status: status,
            headers: HTTPHeaders(fields.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }),
            body: Data(data[(newline + 1)...]),
            storedAt: Date(timeIntervalSince1970: storedAt), varying: varying)
    }

    public func store(_ response: CachedResponse, for key: String) {
        let meta: [String: Any] = [
            "status": response.status,
            "storedAt": response.storedAt.timeIntervalSince1970,
            "headers": response.headers.map { [$0.name, $0.value] },
            "varying": response.varying,
        ]
        guard var data = try? JSONSerialization.data(withJSONObject: meta) else { return }
        data.append(0x0A)
        data.append(response.body)
        guard let replacement = try? FileReplacement(replacing: file(key)) else { return }
        do {
            try replacement.write(data)
            try replacement.commit()
        } catch {
            replacement.discard()
        }
    }

    public func remove(for key: String) {
        try? FileManager.default.removeItem(at: file(key))
    }
}
