import Foundation

/// The delegate queue of ``URLSessionHTTPClient``'s session: serial, and holding
/// FoundationNetworking back when its callbacks pile up.
///
/// FoundationNetworking reads the network on its own work queue and hands every chunk of a
/// body (16 KiB) to the delegate queue as one operation, with no limit and no way to pause a
/// task. When the delegate is slower than the network (a body written to a file on a busy
/// machine), the chunks wait in memory: 3.6 GiB in 4 s for `/endless-fast` saved to a file on
/// this two-core machine, and a task cancelled then still had all of them to go through. Here
/// adding an operation waits while ``limit`` are queued: the thread that waits is
/// FoundationNetworking's work queue, inside libcurl's write callback, so libcurl stops reading
/// and TCP holds the server back, as curl's own pause does.
///
/// A wait never lasts more than ``longestWait``: should a callback ever wait for the work queue
/// in turn (the router never does; it cancels on a queue of its own), the two would otherwise
/// wait for each other for ever.
final class URLSessionDelegateQueue: OperationQueue, @unchecked Sendable {
    /// Operations queued before adding another waits: 512 body chunks of 16 KiB, 8 MiB.
    static let limit = 512
    /// The longest one addition waits, in seconds.
    static let longestWait: TimeInterval = 1

    private let condition = NSCondition()
    /// Operations added and not yet finished (under `condition`).
    private var queued = 0

    override init() {
        super.init()
        name = "courier-urlsession-delegate"
        maxConcurrentOperationCount = 1
    }

    override func addOperation(_ block: @escaping @Sendable () -> Void) {
        condition.lock()
        let giveUp = Date(timeIntervalSinceNow: Self.longestWait)
        while queued >= Self.limit, condition.wait(until: giveUp) {}
        queued += 1
        condition.unlock()
        super.addOperation { [self] in
            block()
            condition.lock()
            queued -= 1
            condition.signal()
            condition.unlock()
        }
    }
}
