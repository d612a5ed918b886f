import CourierTestSupport
import Foundation
import Testing

@Suite("courier bench")
struct BenchCommandTests {
    @Test func measuresEachBackendAndReportsJSON() async throws {
        let server = try TestServers.fixture()
        let result = try await CourierBinary.run([
            "bench", server.url("/echo").absoluteString, "--backend", "curl,urlsession",
            "-n", "60", "-c", "6", "--warmup", "6", "--json",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(lines.map { $0["backend"] as? String } == ["curl", "urlsession"])
        for line in lines {
            #expect(line["requests"] as? Int == 60)
            #expect(line["errors"] as? Int == 0)
            #expect(line["non2xx"] as? Int == 0)
            #expect((line["requestsPerSecond"] as? Double ?? 0) > 0)
        }
    }

    @Test func refusesBadArguments() async throws {
        let badBackend = try await CourierBinary.run([
            "bench", "http://127.0.0.1:1/", "--backend", "telnet",
        ])
        #expect(badBackend.status == 2)
        #expect(badBackend.stderr.contains("unknown backend 'telnet'"))
        let badURL = try await CourierBinary.run(["bench", "ftp://x/"])
        #expect(badURL.status == 2)
        #expect(badURL.stderr.contains("is not an http or https URL"))
        let zero = try await CourierBinary.run(["bench", "http://127.0.0.1:1/", "-n", "0"])
        #expect(zero.status == 2)
    }
}
