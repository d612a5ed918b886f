import Foundation

/// What `courier report` says about one job's logs, built line by line in bounded memory
/// (histograms, counters, a fixed sample for charts; whole entries only for tasks that did not
/// end ok, and for every task when JUnit output is asked for).
struct RunReport {
    /// A task's final word, for the failure list and JUnit.
    struct TaskResult {
        var task: String
        var outcome: String
        var attempts: Int
        var status: Int?
        var errorKind: String?
        var message: String?
        var totalMs: Double?
    }

    /// One sampled request, for the latency-over-time chart.
    struct Point {
        var time: Double
        var milliseconds: Double
        var ok: Bool
    }

    let job: String
    private(set) var runs: [String] = []
    private(set) var backends: Set<String> = []
    private(set) var requests = 0
    private(set) var retries = 0
    /// Final lines that were 304 Not Modified (a conditional task whose output had not changed).
    private(set) var notModified = 0
    private(set) var statuses: [Int: Int] = [:]
    /// Tasks by the number of attempts their final line took (a replayed task counts per run).
    private(set) var attemptsPerTask: [Int: Int] = [:]
    private(set) var errorKinds: [String: Int] = [:]
    private(set) var total = LatencyHistogram()
    /// DNS, connect, TLS and first byte, in ``phaseNames`` order.
    private var phaseHistograms = [LatencyHistogram](repeating: LatencyHistogram(), count: 4)
    var phases: [String: LatencyHistogram] {
        Dictionary(uniqueKeysWithValues: zip(Self.phaseNames, phaseHistograms))
    }
    private(set) var firstTime = Double.infinity
    private(set) var lastTime = -Double.infinity
    /// Requests started in each second since `firstTime`.
    private(set) var perSecond: [Int: Int] = [:]
    private(set) var sample: [Point] = []
    private var sampleSeen = 0
    private var random = SplitMix64(seed: 0x5EED)
    private(set) var slowest: [TaskResult] = []
    /// The latest line of each task (name-keyed; ok ones only when `keepEveryTask`).
    private(set) var tasks: [String: TaskResult] = [:]
    private var done: Set<UInt64> = []
    let keepEveryTask: Bool

    static let phaseNames = ["dnsMs", "connectMs", "tlsMs", "firstByteMs"]
    static let sampleSize = 2000
    static let slowestCount = 10

    init(job: String, keepEveryTask: Bool = false) {
        self.job = job
        self.keepEveryTask = keepEveryTask
    }

    mutating func add(_ line: LogLine) {
        switch line.event {
        case "run.start":
            if !runs.contains(line.run) { runs.append(line.run) }
            if let backend = line.backend { backends.insert(backend) }
        case "request":
            addRequest(line)
        case "task.skipped":
            // No request was sent: the task counts, with its reason, and nothing else does.
            guard let task = line.task else { break }
            if let kind = line.errorKind { errorKinds[kind, default: 0] += 1 }
            done.remove(FNV1a.hash(task.utf8))
            tasks[task] = TaskResult(
                task: task, outcome: "skipped", attempts: 0, status: nil,
                errorKind: line.errorKind, message: line.errorMessage, totalMs: nil)
        default:
            break
        }
    }

    private mutating func addRequest(_ line: LogLine) {
        guard let task = line.task else { return }
        requests += 1
        if line.outcome == "retry" { retries += 1 }
        if let status = line.status { statuses[status, default: 0] += 1 }
        if let kind = line.errorKind { errorKinds[kind, default: 0] += 1 }
        let milliseconds = line.totalMs ?? 0
        total.record(milliseconds: milliseconds)
        if let value = line.dnsMs { phaseHistograms[0].record(milliseconds: value) }
        if let value = line.connectMs { phaseHistograms[1].record(milliseconds: value) }
        if let value = line.tlsMs { phaseHistograms[2].record(milliseconds: value) }
        if let value = line.firstByteMs { phaseHistograms[3].record(milliseconds: value) }
        firstTime = min(firstTime, line.time)
        lastTime = max(lastTime, line.time + milliseconds / 1000)
        perSecond[Int(line.time.rounded(.down)), default: 0] += 1

        let ok = line.outcome == "ok"
        let point = Point(
            time: line.time, milliseconds: milliseconds,
            ok: line.errorKind == nil && (line.status ?? 0) < 400)
        // Reservoir sampling keeps a uniform sample of every request in fixed memory.
        sampleSeen += 1
        if sample.count < Self.sampleSize {
            sample.append(point)
        } else {
            let slot = Int(random.next() % UInt64(sampleSeen))
            if slot < Self.sampleSize { sample[slot] = point }
        }

        guard line.outcome == "ok" || line.outcome == "failed" || line.outcome == "skipped" else {
            return
        }
        attemptsPerTask[line.attempt ?? 1, default: 0] += 1
        if line.notModified { notModified += 1 }
        let result = TaskResult(
            task: task, outcome: line.outcome ?? "", attempts: line.attempt ?? 1,
            status: line.status, errorKind: line.errorKind, message: line.errorMessage,
            totalMs: line.totalMs)
        if slowest.count < Self.slowestCount || milliseconds > (slowest.last?.totalMs ?? 0) {
            slowest.removeAll { $0.task == task }
            slowest.append(result)
            slowest.sort { ($0.totalMs ?? 0) > ($1.totalMs ?? 0) }
            if slowest.count > Self.slowestCount { slowest.removeLast() }
        }
        let key = FNV1a.hash(task.utf8)
        if ok {
            done.insert(key)
            if keepEveryTask {
                tasks[task] = result
            } else if !tasks.isEmpty {
                tasks[task] = nil
            }
        } else {
            done.remove(key)
            tasks[task] = result
        }
    }

    /// Tasks whose final outcome is not ok, in id order.
    var failedTasks: [TaskResult] {
        tasks.values.filter { $0.outcome != "ok" }.sorted { $0.task < $1.task }
    }

    var taskCount: Int { done.count + tasks.values.filter { $0.outcome != "ok" }.count }
    var skippedCount: Int { tasks.values.filter { $0.outcome == "skipped" }.count }
    var failedCount: Int { tasks.values.filter { $0.outcome == "failed" }.count }

    /// Seconds from the first request's start to the last one's end.
    var wallSeconds: Double { requests == 0 ? 0 : max(0.001, lastTime - firstTime) }
    var requestsPerSecond: Double { requests == 0 ? 0 : Double(requests) / wallSeconds }
}

/// A small, seeded generator, so that a report of the same logs is the same report.
struct SplitMix64 {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
