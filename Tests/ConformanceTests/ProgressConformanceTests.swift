import Courier
import CourierTestSupport
import Foundation
import Testing

/// `HTTPRequest.progress`: both transports report bytes sent and received as they go, never
/// backwards, ending on the totals.
@Suite("Progress")
struct ProgressConformanceTests {
    final class Reports: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [TransferProgress] = []
        func add(_ progress: TransferProgress) { lock.withLock { list.append(progress) } }
        var all: [TransferProgress] { lock.withLock { list } }
    }

    static func isMonotonic(_ reports: [TransferProgress]) -> Bool {
        zip(reports, reports.dropFirst()).allSatisfy {
            $0.sent <= $1.sent && $0.received <= $1.received
        }
    }

    @Test(
        "a download reports received bytes up to Content-Length", arguments: TransportKind.allCases)
    func download(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let size = 4 << 20
        let reports = Reports()
        var request = HTTPRequest(url: server.url("/bytes?n=\(size)"))
        request.progress = ProgressHandler { reports.add($0) }
        let response = try await transport.makeClient().perform(request)
        #expect(response.body.count == size)
        let all = reports.all
        #expect(all.count >= 2, "reported along the way, not only at the end")
        #expect(Self.isMonotonic(all))
        #expect(all.last?.received == Int64(size))
        #expect(all.last?.totalToReceive == Int64(size))
        #expect(all.last?.fractionReceived == 1)
        #expect(all.last?.totalToSend == nil)
    }

    @Test("an upload reports sent bytes up to the body's length", arguments: TransportKind.allCases)
    func upload(transport: TransportKind) async throws {
        let server = try TestServers.fixture()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-progress-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("up.bin")
        let size = 16 << 20
        try Data(repeating: 0x61, count: size).write(to: file)
        let reports = Reports()
        var request = HTTPRequest(url: server.url("/digest"), method: .post)
        request.streamedBody = .file(file)
        request.progress = ProgressHandler { reports.add($0) }
        let response = try await transport.makeClient().perform(request)
        #expect(response.status == 200)
        let all = reports.all
        #expect(Self.isMonotonic(all))
        #expect(all.last?.sent == Int64(size))
        #expect(all.last?.totalToSend == Int64(size))
        if transport == .curl {
            // FoundationNetworking may report a fast loopback upload only once, at its end.
            #expect(all.contains { $0.sent > 0 && $0.sent < Int64(size) }, "reported along the way")
        }
    }
}
