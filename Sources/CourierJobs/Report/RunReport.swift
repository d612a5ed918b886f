import Foundation

/// What `courier report` says about one job's logs, built line by line in bounded memory
/// (histograms, counters, a fixed sample for charts, a few bytes per task; whole lines only
/// for tasks that did not end ok, and for every task when JUnit output is asked for).
///
/// Two kinds of figures, kept apart: per attempt (`requests`, `retries`, `statuses`,
/// `errorKinds`, latency, the rate and the charts) every request line counts, in every run;
/// per task (``outcomes``: tasks by outcome, not modified, attempts per task, slowest, failures)
/// each task counts once, by its last final line across all the logs, whatever number of runs
/// (shards, replays, resumes, repeated runs) sent it.
struct RunReport {
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
    /// Writes' `request.start` lines not yet matched by a `request` line, by run and task: a
    /// run cut while a write was under way leaves one, and the server may have taken it
    /// (a trial's audit counted 20 requests where the server had seen 22).
    private var writesUnderWay: [UInt64: Int] = [:]
    /// Writes sent with no answer logged, in every run.
    var unansweredWrites: Int { writesUnderWay.values.reduce(0, +) }
    private(set) var statuses: [Int: Int] = [:]
    /// Of ``statuses``, the attempts that failed or were retried: a status the job expects (a
    /// 404 it checks for) is no failure, and is not drawn as one (trial UUU: an all-ok run of
    /// expected 404s was red).
    private(set) var failedStatuses: [Int: Int] = [:]
    private(set) var errorKinds: [String: Int] = [:]
    /// Attempts that waited for their host (`throttledMs`), and how long in all.
    private(set) var throttledRequests = 0
    private(set) var throttledMs = 0.0
    /// Attempts that waited before they were sent, at the rate limit or their host's gate
    /// (`blockedMs`), and how long in all.
    private(set) var blockedRequests = 0
    private(set) var blockedMs = 0.0
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
    /// The shared fold of final outcomes: which tasks are done, and the last line of the
    /// others (of every task, for JUnit).
    private(set) var history: TaskHistory
    /// Per-task figures, as ``history`` decides them once every line is read (``finish()``).
    private(set) var outcomes = TaskOutcomes()
    private(set) var runTable = RunTable()
    let keepEveryTask: Bool

    static let phaseNames = ["dnsMs", "connectMs", "tlsMs", "firstByteMs"]
    static let sampleSize = 2000

    init(job: String, keepEveryTask: Bool = false) {
        self.job = job
        self.keepEveryTask = keepEveryTask
        history = TaskHistory(keepAllFinals: keepEveryTask)
    }

    /// Works out the per-task figures; call once after the last ``add(_:file:)``.
    mutating func finish() {
        outcomes.finish(history)
    }

    /// - Parameter current: whether the line's log is in its job's current history
    ///   (``JobHistory/currentLogs(among:)``): only those decide the per-task figures, as they
    ///   decide what `--resume` sends; every log's requests count.
    /// The runs of the job's current history: only their unfinished ones leave the job
    /// not complete (a later plain run started the history afresh).
    private(set) var currentRuns: Set<String> = []
    /// The job's other lines of runs, which its history leaves out, that left tasks not
    /// done: failed backfills before the night, or the night before a backfill
    /// (``JobHistory/otherLines(folder:current:)``).
    var otherLines: [JobHistory.OtherLine] = []
    /// Whether the job's current history holds a whole run, as `--resume` judges it
    /// (``JobHistory/whole``); `nil` when the logs were read from standard input.
    var historyWhole: Bool?

    mutating func add(_ line: LogLine, file: String = "", current: Bool = true) {
        runTable.add(line, file: file)
        switch line.event {
        case "run.start":
            if !runs.contains(line.run) { runs.append(line.run) }
            if let backend = line.backend { backends.insert(backend) }
            if current {
                history.add(line, file: file)
                currentRuns.insert(line.run)
            }
        case "request":
            if line.wentOut {
                addRequest(line)
            } else {
                // Not a request, but its wait at the gate was spent (trial R: a write that
                // waited 2.5 s for its host before a stop was not in `throttled`), and a stop
                // that cut a retry's wait leaves that attempt not retried after all.
                addWaits(line)
                if line.cutRetry { retries = max(0, retries - 1) }
            }
            if current { addTaskLine(line) }
        case LogEvent.requestStart:
            if let task = line.task { writesUnderWay[Self.attemptKey(line, task), default: 0] += 1 }
            // The history reads it too: a write that went out and no answer says what became
            // of it is one a repair holds (``WriteRule``).
            if current { history.add(line) }
        case "task.skipped":
            // No request was sent: the task counts, with its reason, and nothing else does.
            if let kind = line.errorKind { errorKinds[kind, default: 0] += 1 }
            if current { addTaskLine(line) }
        default:
            if current { history.add(line) }
        }
    }

    private mutating func addTaskLine(_ line: LogLine) {
        guard let task = line.task else { return }
        // The history keeps no ok line unless every task's is asked for: no need to slim it.
        history.add(line.outcome == "ok" && !keepEveryTask ? line : Self.slim(line))
        outcomes.add(line, key: FNV1a.taskKey(job: line.job, task: task))
    }

    /// The line without what only a replay reads (the request's URL, headers and body): the
    /// history keeps a line per task, and those are most of its bytes.
    private static func slim(_ line: LogLine) -> LogLine {
        var line = line
        line.url = nil
        line.requestHeaders = []
        line.requestBody = nil
        return line
    }

    /// Whether the attempt failed or was retried, as its line's outcome says; a line without
    /// one (an older log's) by its error and status.
    private static func failed(_ line: LogLine) -> Bool {
        guard let outcome = line.outcome else {
            return line.errorKind != nil || (line.status ?? 0) >= 400
        }
        return outcome == LogOutcome.failed.rawValue || outcome == LogOutcome.retry.rawValue
    }

    /// A write's run and task, as one key.
    private static func attemptKey(_ line: LogLine, _ task: String) -> UInt64 {
        FNV1a.taskKey(job: line.run, task: task)
    }

    private mutating func addRequest(_ line: LogLine) {
        guard let task = line.task else { return }
        // Only while a write is under way: a report of a million reads hashes nothing here.
        if !writesUnderWay.isEmpty {
            let key = Self.attemptKey(line, task)
            if let count = writesUnderWay[key] { writesUnderWay[key] = count > 1 ? count - 1 : nil }
        }
        requests += 1
        if line.outcome == "retry" { retries += 1 }
        let failed = Self.failed(line)
        if let status = line.status {
            statuses[status, default: 0] += 1
            if failed { failedStatuses[status, default: 0] += 1 }
        }
        if let kind = line.errorKind { errorKinds[kind, default: 0] += 1 }
        addWaits(line)
        let milliseconds = line.totalMs ?? 0
        total.record(milliseconds: milliseconds)
        if let value = line.dnsMs { phaseHistograms[0].record(milliseconds: value) }
        if let value = line.connectMs { phaseHistograms[1].record(milliseconds: value) }
        if let value = line.tlsMs { phaseHistograms[2].record(milliseconds: value) }
        if let value = line.firstByteMs { phaseHistograms[3].record(milliseconds: value) }
        firstTime = min(firstTime, line.time)
        lastTime = max(lastTime, line.time + milliseconds / 1000)
        perSecond[Int(line.time.rounded(.down)), default: 0] += 1

        let point = Point(time: line.time, milliseconds: milliseconds, ok: !failed)
        // Reservoir sampling keeps a uniform sample of every request in fixed memory.
        sampleSeen += 1
        if sample.count < Self.sampleSize {
            sample.append(point)
        } else {
            let slot = Int(random.next() % UInt64(sampleSeen))
            if slot < Self.sampleSize { sample[slot] = point }
        }
    }

    /// What the attempt waited at its host's gate, and before it was sent at all.
    private mutating func addWaits(_ line: LogLine) {
        if let waited = line.throttledMs, waited > 0 {
            throttledRequests += 1
            throttledMs += waited
        }
        if let waited = line.blockedMs ?? line.throttledMs, waited > 0 {
            blockedRequests += 1
            blockedMs += waited
        }
    }

    /// Seconds from the first request's start to the last one's end; for several runs, the
    /// time they were running (``RunTable/busySeconds``), not the idle hours between them.
    var wallSeconds: Double {
        guard requests > 0 else { return 0 }
        let span = max(0.001, lastTime - firstTime)
        let busy = runTable.busySeconds
        return runTable.rows.count > 1 && busy > 0 ? max(0.001, min(span, busy)) : span
    }
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
