import Courier

/// What a run's `request` lines add up to, kept as the log writes them (``RunLog`` records
/// each line here as it writes it), so that the metrics and the log agree line for line:
/// requests by status class, retries, bytes each way and a latency histogram.
final class RequestFigures: Sendable {
    /// The figures at one moment.
    struct Counts: Sendable, Equatable {
        /// Requests by status class (`2xx`, …) or `error` when no response came.
        var byClass: [String: Int] = [:]
        /// Attempts another attempt followed (`outcome: "retry"`).
        var retries = 0
        var bytesSent = 0
        var bytesReceived = 0
        /// Requests by latency: `buckets[i]` counts those above the bound before it and at
        /// most ``RequestFigures/bounds``[i]; the last counts those above every bound.
        var buckets = [Int](repeating: 0, count: RequestFigures.bounds.count + 1)
        /// Seconds, every request's summed.
        var latencySum = 0.0
        var requests = 0
    }

    /// The histogram's upper bounds in seconds: from a loopback answer to a job's default
    /// timeout (30 s) and beyond.
    static let bounds: [Double] = [
        0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120,
    ]
    /// The classes always written, so that each series exists from the run's start.
    static let classes = ["2xx", "3xx", "4xx", "5xx", "error"]

    private let counts = Locked(Counts())

    init() {}

    var snapshot: Counts { counts.withLock { $0 } }

    /// `2xx` … `5xx` for a status (`1xx` for an interim one a transport returned), `error`
    /// for an attempt that got no response.
    static func statusClass(_ status: Int?) -> String {
        guard let status, (100...599).contains(status) else { return "error" }
        return "\(status / 100)xx"
    }

    /// One request line: its status (`nil` without a response), whether it was retried, its
    /// body sizes and its `timings.totalMs` as written (thousandths of a millisecond), so
    /// that a value on a bucket's bound lands where a reader of the log puts it.
    func record(
        status: Int?, retried: Bool, bytesSent: Int, bytesReceived: Int, totalMs: Double
    ) {
        let seconds = ((totalMs * 1000).rounded() / 1000) / 1000
        let bucket = Self.bounds.firstIndex { seconds <= $0 } ?? Self.bounds.count
        counts.withLock {
            $0.byClass[Self.statusClass(status), default: 0] += 1
            if retried { $0.retries += 1 }
            $0.bytesSent += bytesSent
            $0.bytesReceived += bytesReceived
            $0.buckets[bucket] += 1
            $0.latencySum += seconds
            $0.requests += 1
        }
    }
}
