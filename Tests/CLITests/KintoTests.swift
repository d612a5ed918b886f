import CourierTestSupport
import Foundation
import Testing

/// Against Kinto (PyPI), an API server nobody here wrote: a listing of references whose
/// targets were deleted since (Kinto answers 404 for a deleted record), fetched child by child.
/// `onResponse` makes those 404s ignored (ok, nothing kept, counted), not failures.
@Suite("Kinto: children deleted upstream")
struct KintoTests {
    static let password = "k1nto-pw"

    /// A request to Kinto, as `user` when given; its status, which must be 2xx.
    static func call(_ method: String, _ url: URL, json: String? = nil, as user: String?) throws {
        var headers: [(String, String)] = []
        if let user {
            let basic = Data("\(user):\(password)".utf8).base64EncodedString()
            headers.append(("Authorization", "Basic \(basic)"))
        }
        if json != nil { headers.append(("Content-Type", "application/json")) }
        let (status, body) = try LoopbackHTTP.exchange(
            method, url, body: Data((json ?? "").utf8), headers: headers)
        try #require(
            (200..<300).contains(status),
            "\(method) \(url.path): \(status) \(String(decoding: body, as: UTF8.self))")
    }

    @Test(
        "children deleted since their parent listed them are ignored, counted, and not failed",
        arguments: RunCommandTests.backends)
    func deletedChildren(backend: String) async throws {
        let base = try TestServers.kinto()
        let suffix = String(UUID().uuidString.prefix(8)).lowercased()
        let (user, bucket) = ("u" + suffix, "b" + suffix)
        // An account of Kinto's own (its accounts plugin), which may make buckets.
        try Self.call(
            "PUT", base.appendingPathComponent("v1/accounts/\(user)"),
            json: #"{"data": {"password": "\#(Self.password)"}}"#, as: nil)
        let root = base.appendingPathComponent("v1/buckets/\(bucket)")
        try Self.call("PUT", root, as: user)
        for collection in ["refs", "items"] {
            try Self.call("PUT", root.appendingPathComponent("collections/\(collection)"), as: user)
        }
        for n in 1...5 {
            try Self.call(
                "PUT", root.appendingPathComponent("collections/items/records/r\(n)"),
                json: #"{"data": {"name": "item \#(n)"}}"#, as: user)
            try Self.call(
                "PUT", root.appendingPathComponent("collections/refs/records/x\(n)"),
                json: #"{"data": {"target": "r\#(n)"}}"#, as: user)
        }
        // Gone upstream after the references to them were made.
        for n in [2, 4] {
            try Self.call(
                "DELETE", root.appendingPathComponent("collections/items/records/r\(n)"), as: user)
        }

        let space = try JobWorkspace()
        defer { space.remove() }
        let auth = #""auth": {"basic": {"user": "\#(user)", "password": "${env:KINTO_PW}"}}"#
        try """
        {"version": 1, "name": "kinto", "baseURL": "\(base.absoluteString)", "outputDir": "out",
         "retry": {"maxAttempts": 1},
         "tasks": [
          {"id": "refs", "path": "/v1/buckets/\(bucket)/collections/refs/records",
           "query": {"_sort": "id", "_limit": "2"}, \(auth),
           "paginate": {"next": {"header": "Next-Page"}},
           "capture": {"targets": {"json": "/data/*/target"}}},
          {"id": "item-{t}", "path": "/v1/buckets/\(bucket)/collections/items/records/{t}",
           "foreach": {"t": {"capture": "targets"}}, \(auth),
           "onResponse": [{"status": [404], "action": "ignore"}],
           "save": "items/{t}.json"}
         ]}
        """.write(
            to: space.folder.appendingPathComponent("job.json"), atomically: true, encoding: .utf8)
        let environment = ["KINTO_PW": Self.password]
        let run = try await space.run(backend: backend, environment: environment)
        #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
        #expect(run.stdout.contains("(2 ignored by onResponse)"), "\(run.stdout)")
        let saved = try FileManager.default.contentsOfDirectory(
            atPath: space.folder.appendingPathComponent("out/items").path
        ).sorted()
        #expect(saved == ["r1.json", "r3.json", "r5.json"])
        let lines = try space.logLines(job: "kinto")
        let ignored = lines.filter { $0["action"] as? String == "ignore" }
        #expect(
            Set(ignored.compactMap { $0["task"] as? String }) == ["item-r2", "item-r4"],
            "\(ignored)")
        #expect(
            ignored.allSatisfy { $0["status"] as? Int == 404 && $0["outcome"] as? String == "ok" })
        let end = lines.last { $0["event"] as? String == "run.end" }
        #expect((end?["tasks"] as? [String: Any])?["ignored"] as? Int == 2)
        // Done is done: a repair has nothing to send, and the password is in no byte.
        let repaired = try await space.run(
            ["--resume"], backend: backend, environment: environment)
        #expect(repaired.stdout.contains("every task done"), "\(repaired.stdout)")
        let written = try space.everyWrittenByte()
        #expect(written.range(of: Data(Self.password.utf8)) == nil)
    }
}
