import Foundation

/// How far a request has got: bytes of body sent and received, with the totals when known.
public struct TransferProgress: Sendable, Hashable {
    /// Request body bytes sent so far.
    public var sent: Int64
    /// The request body's length; `nil` without a body.
    public var totalToSend: Int64?
    /// Response body bytes received so far, as they come off the wire (compressed, on curl).
    public var received: Int64
    /// The response's `Content-Length`; `nil` when it was not announced.
    public var totalToReceive: Int64?

    public init(sent: Int64, totalToSend: Int64?, received: Int64, totalToReceive: Int64?) {
        self.sent = sent
        self.totalToSend = totalToSend
        self.received = received
        self.totalToReceive = totalToReceive
    }

    /// Received over total, from 0 to 1, when the total is known.
    public var fractionReceived: Double? {
        guard let totalToReceive, totalToReceive > 0 else { return nil }
        return Double(received) / Double(totalToReceive)
    }

    /// Sent over total, from 0 to 1, when there is a body.
    public var fractionSent: Double? {
        guard let totalToSend, totalToSend > 0 else { return nil }
        return Double(sent) / Double(totalToSend)
    }
}

/// A closure told of a request's ``TransferProgress`` (``HTTPRequest/progress``).
///
/// It is called on the transport's thread (curl's event loop, URLSession's delegate queue)
/// whenever the figures change, so it must return quickly: hand the value to your own queue or
/// actor. Two handlers are equal only when they are the same handler.
public struct ProgressHandler: Sendable, Hashable {
    private let id = UUID()
    let report: @Sendable (TransferProgress) -> Void

    public init(_ report: @escaping @Sendable (TransferProgress) -> Void) { self.report = report }

    public static func == (lhs: ProgressHandler, rhs: ProgressHandler) -> Bool { lhs.id == rhs.id }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// Calls a ``ProgressHandler`` only when the figures changed: transports report often (curl
/// at least once a second while idle), the handler needs to hear each change once.
package final class ProgressReporter: @unchecked Sendable {
    private let handler: ProgressHandler
    private var last: TransferProgress?

    package init(_ handler: ProgressHandler) { self.handler = handler }

    /// Reports `progress` unless it is what was last reported. One thread at a time.
    package func update(_ progress: TransferProgress) {
        guard progress != last else { return }
        last = progress
        handler.report(progress)
    }
}
