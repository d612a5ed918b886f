import CourierTestSupport
import Foundation
import Testing

/// Writes that happen once against localstripe (PyPI), a fake Stripe nobody here wrote, which
/// keeps every customer it creates: customers made with a form body, as Stripe's clients send
/// them, whose answers fail the job's expectation. The server's own list of customers is the
/// count of effects: no repair makes a second one, and naming a task does.
@Suite("writes against localstripe")
struct LocalStripeTests {
    /// The customers localstripe keeps whose email is under `tag`.
    static func customers(_ base: URL, tag: String) throws -> Int {
        let credential = Data("sk_test_courier:".utf8).base64EncodedString()
        let (status, body) = try LoopbackHTTP.exchange(
            "GET", URL(string: base.absoluteString + "/v1/customers?limit=100")!,
            headers: [("Authorization", "Basic \(credential)")])
        #expect(status == 200)
        let list = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
        let items = list?["data"] as? [[String: Any]] ?? []
        return items.filter { ($0["email"] as? String)?.hasSuffix("@\(tag).example") == true }
            .count
    }

    @Test("answered writes whose expectation failed are never made twice by a repair")
    func repairsMakeNoSecondCustomer() async throws {
        let base = try TestServers.localstripe()
        let space = try JobWorkspace()
        defer { space.remove() }
        let tag = FixtureServer.uniqueKey("cus").lowercased()
        // localstripe answers every customer with "currency": "eur"; the job expects usd.
        let job = #"""
            {"version": 1, "name": "stripe", "baseURL": "\#(base.absoluteString)", "outputDir": "out",
             "auth": {"basic": {"user": "${env:STRIPE_KEY}", "password": ""}},
             "retry": {"maxAttempts": 1},
             "tasks": [
               {"id": "customer-{n}", "method": "POST", "path": "/v1/customers",
                "headers": {"Content-Type": "application/x-www-form-urlencoded"},
                "body": "email=c{n}%40\#(tag).example&metadata[order]={n}",
                "foreach": {"n": {"range": [1, 3]}}, "idempotencyKey": true,
                "expect": {"json": {"/currency": "usd"}}}
             ]}
            """#
        try job.write(
            to: space.folder.appendingPathComponent("job.json"), atomically: true, encoding: .utf8)
        let environment = ["STRIPE_KEY": "sk_test_courier"]
        let first = try await space.run(backend: "curl", environment: environment)
        #expect(first.status == 1, "\(first.stderr)")
        #expect(try Self.customers(base, tag: tag) == 3)
        let repairs: [[String]] = [
            ["run", "job.json", "--log-dir", space.logs.path, "--resume"],
            ["replay", "--job", "job.json", "--log-dir", space.logs.path, "--all"],
        ]
        for repair in repairs {
            let result = try await CourierBinary.run(
                repair + ["--no-progress"], environment: environment, directory: space.folder)
            #expect(result.status == 1, "\(repair): \(result.stderr)")
            #expect(
                result.stdout.contains("3 writes not sent again"), "\(repair): \(result.stdout)")
            #expect(try Self.customers(base, tag: tag) == 3, "\(repair) made a customer twice")
        }
        let named = try await CourierBinary.run(
            [
                "replay", "--job", "job.json", "--log-dir", space.logs.path, "--task",
                "customer-2", "--no-progress",
            ], environment: environment, directory: space.folder)
        #expect(named.status == 1, "its expectation fails again: \(named.stderr)")
        #expect(try Self.customers(base, tag: tag) == 4, "named, customer-2 was sent")
        LogContract.check(try space.logLines(job: "stripe"))
        // The key is in every line of the task, and no secret is anywhere.
        let written = try space.everyWrittenByte()
        #expect(written.range(of: Data("sk_test_courier".utf8)) == nil)
    }
}
