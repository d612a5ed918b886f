import Courier
import Foundation

/// What a write's lines say beside any request's: its start, written before it goes out, and
/// what the history knows it by (``WriteHistory``).
extension RunLog {
    /// A write about to go to the transport: its `request.start` line, on file before this
    /// returns, so that a run killed while the write is under way leaves its outcome unknown
    /// rather than unsaid (``WriteHistory``).
    func requestStart(
        task: String, request: HTTPRequest, page: Int?, keyHeader: String?, digest: String?
    ) throws {
        var line = JSONLineBuilder()
        line.string("event", LogEvent.requestStart)
        line.timestamp("ts", Date())
        line.string("run", run)
        line.string("job", job)
        line.string("task", task)
        if let page { line.int("page", page) }
        line.string("method", request.method.rawValue)
        line.string("url", request.displayURL.absoluteString)
        Self.addWrite(&line, request: request, keyHeader: keyHeader, digest: digest)
        try write(line: line.finishLine(), now: true)
    }

    /// A write's `idempotencyKey` (the value its request carries in `keyHeader`) and its
    /// `requestDigest` (``ExpandedTask/Fields/writeDigest``), each when it has one.
    static func addWrite(
        _ line: inout JSONLineBuilder, request: HTTPRequest, keyHeader: String?, digest: String?
    ) {
        if let key = keyHeader.flatMap({ request.headers[$0] }) {
            line.string("idempotencyKey", key)
        }
        if let digest { line.string("requestDigest", digest) }
    }
}
