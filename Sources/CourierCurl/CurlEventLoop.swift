import CCurl
import Courier
import Foundation

/// Owns one libcurl multi handle and the one thread that drives it.
///
/// Only the loop thread calls libcurl. Other threads hand over work (new transfers,
/// cancellations, unpauses, shutdown) through `inbox` under a lock and wake the loop with
/// `curl_multi_wakeup`, the one multi call that is safe from another thread (libcurl-thread).
/// They wake it only while holding the lock and only until the loop has marked itself
/// `stopped`, which it does under that lock before it frees the multi handle, so a wake-up can
/// never reach a freed handle.
///
/// Each transfer's ``CurlTransfer/state`` says where it is (queued, running, paused,
/// finished) and its transitions say what to do; ``CurlOutcome`` turns a finished transfer
/// into its caller's answer. `active` only finds a transfer by the easy handle curl names.
///
/// The loop is also a `TaskExecutor`: the jobs of tasks that prefer it come through the same
/// inbox and run on the loop thread between rounds of libcurl work, so a request made there
/// goes to this loop and its caller resumes here, without a thread hand-off either way.
final class CurlEventLoop: TaskExecutor, @unchecked Sendable {
    private struct Inbox {
        var submissions: [CurlTransfer] = []
        var cancellations: [CurlTransfer] = []
        /// Paused streaming transfers whose reader has caught up.
        var unpauses: [CurlTransfer] = []
        /// Swift jobs of the tasks that prefer this loop as their executor.
        var jobs: [UnownedJob] = []
        var stopping = false
        /// True while the loop may be blocked in curl_multi_poll, so callers know to wake it.
        var sleeping = false
        var stopped = false
    }

    private let settings: CurlHTTPClient.Configuration
    private let multi: UnsafeMutableRawPointer
    private let inbox = Locked(Inbox())
    private let finished = DispatchSemaphore(value: 0)
    private let counters = Locked(CurlHTTPClient.Statistics())
    /// Weak: the running thread keeps itself and its block (which holds the loop) alive, and a
    /// strong reference back made a cycle that LeakSanitizer showed leaking every loop.
    private weak var loopThread: Thread?

    // Loop-thread state: the transfers in the multi handle (running or paused), by easy handle.
    private var active: [UnsafeMutableRawPointer: (CurlTransfer, CurlEasyHandle)] = [:]
    private var idleHandles: [CurlEasyHandle] = []

    init(settings: CurlHTTPClient.Configuration) {
        precondition(CurlGlobal.initialized, "curl_global_init failed")
        self.settings = settings
        multi = curl_multi_init()
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, settings.maxConnections)
        _ = ccurl_multi_setopt_long(
            multi, CURLMOPT_MAX_HOST_CONNECTIONS, settings.maxConnectionsPerHost)
        _ = ccurl_multi_setopt_long(
            multi, CURLMOPT_PIPELINING,
            settings.http2 ? Int(CURLPIPE_MULTIPLEX) : Int(CURLPIPE_NOTHING))
        // Keep as many idle connections as may be open at once, so none is closed and reopened.
        _ = ccurl_multi_setopt_long(
            multi, CURLMOPT_MAXCONNECTS,
            max(settings.maxConnections, settings.maxConnectionsPerHost, 64))
        let thread = Thread { [self] in run() }
        thread.name = curlLoopThreadName
        thread.stackSize = 1 << 20
        loopThread = thread
        thread.start()
    }

    /// Hands a transfer to the loop, queued; false when the loop is stopping, and then the
    /// caller answers it.
    func submit(_ transfer: CurlTransfer) -> Bool {
        inbox.withLock { inbox -> Bool in
            guard !inbox.stopping else { return false }
            inbox.submissions.append(transfer)
            wakeIfSleeping(&inbox)
            return true
        }
    }

    /// Runs a job of a task that prefers this loop as its executor, between rounds of libcurl
    /// work; after shutdown, on a Dispatch thread instead, so that no task is stranded.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let queued = inbox.withLock { inbox -> Bool in
            guard !inbox.stopped else { return false }
            inbox.jobs.append(job)
            wakeIfSleeping(&inbox)
            return true
        }
        if !queued { runElsewhere([job]) }
    }

    /// Runs jobs that came after the loop stopped. They still run as this executor's: handed to
    /// the global executor, a task that prefers this loop would be sent back here at its next
    /// step, and back again, for ever.
    private func runElsewhere(_ jobs: [UnownedJob]) {
        guard !jobs.isEmpty else { return }
        let executor = asUnownedTaskExecutor()
        for job in jobs {
            DispatchQueue.global().async { job.runSynchronously(on: executor) }
        }
    }

    /// What the loop's thread records as its current loop (``CurlHTTPClient/currentLoop``).
    var identity: UnsafeRawPointer { UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()) }

    /// Asks the loop to drop a transfer and resume its caller with `.cancelled`. The flag is
    /// what stops one still queued; the inbox entry removes one already in the multi handle.
    func cancel(_ transfer: CurlTransfer) {
        inbox.withLock { inbox in
            transfer.cancelRequested = true
            guard !inbox.stopped else { return }
            inbox.cancellations.append(transfer)
            wakeIfSleeping(&inbox)
        }
    }

    /// Asks the loop to unpause a streaming transfer whose reader has caught up.
    func unpause(_ transfer: CurlTransfer) {
        inbox.withLock { inbox in
            guard !inbox.stopped else { return }
            inbox.unpauses.append(transfer)
            wakeIfSleeping(&inbox)
        }
    }

    /// Called with the inbox locked: only one wake-up per sleep, and never after teardown.
    private func wakeIfSleeping(_ inbox: inout Inbox) {
        guard inbox.sleeping, !inbox.stopped else { return }
        inbox.sleeping = false
        curl_multi_wakeup(multi)
    }

    /// Stops the loop: every transfer still waiting ends with `.cancelled`, every handle is
    /// freed. Blocks until the loop thread has finished, unless called from it.
    func shutdown() {
        let first = inbox.withLock { inbox -> Bool in
            guard !inbox.stopping else { return false }
            inbox.stopping = true
            if !inbox.stopped { curl_multi_wakeup(multi) }
            return true
        }
        guard first else { return }
        if Thread.current !== loopThread { finished.wait() }
    }

    var statistics: CurlHTTPClient.Statistics { counters.withLock { $0 } }

    // MARK: - Loop thread

    private func run() {
        ccurl_set_current_loop(identity)
        ccurl_name_thread(curlLoopThreadName)
        var stillRunning: Int32 = 0
        var jobs: [UnownedJob] = []
        while true {
            // The tasks' jobs first, so that what they submit is started in this same round.
            inbox.withLock { swap(&jobs, &$0.jobs) }
            if !jobs.isEmpty {
                let executor = asUnownedTaskExecutor()
                for job in jobs { job.runSynchronously(on: executor) }
                jobs.removeAll(keepingCapacity: true)
            }
            let (submissions, cancellations, unpauses, stopping) = inbox.withLock { inbox in
                defer {
                    inbox.submissions.removeAll(keepingCapacity: true)
                    inbox.cancellations.removeAll(keepingCapacity: true)
                    inbox.unpauses.removeAll()
                }
                // Flags are read here, under the lock the cancelling thread writes them under.
                return (
                    inbox.submissions.map { ($0, $0.cancelRequested) }, inbox.cancellations,
                    inbox.unpauses, inbox.stopping
                )
            }
            for (transfer, cancelled) in submissions {
                switch transfer.state.admit(cancelled: cancelled || stopping) {
                case .start: start(transfer)
                case .refuse: transfer.finish(.failure(cancelledError(transfer)))
                }
            }
            for transfer in cancellations { drop(transfer) }
            // Only a paused transfer is unpaused (one that finished or was dropped meanwhile
            // has no handle). curl may call the write callback from inside curl_easy_pause, on
            // this thread, and pause it again.
            for transfer in unpauses {
                if let raw = transfer.state.resume() { curl_easy_pause(raw, CURLPAUSE_CONT) }
            }
            if stopping { break }

            curl_multi_perform(multi, &stillRunning)
            collectFinished()

            let idle = inbox.withLock { inbox -> Bool in
                let empty =
                    inbox.submissions.isEmpty && inbox.cancellations.isEmpty
                    && inbox.unpauses.isEmpty && inbox.jobs.isEmpty && !inbox.stopping
                inbox.sleeping = empty
                return empty
            }
            if idle {
                // Waits for socket activity, curl's own timers, or curl_multi_wakeup. A wake-up
                // sent between the check above and this call is not lost: curl keeps it for the
                // next poll.
                curl_multi_poll(multi, nil, 0, 1000, nil)
                inbox.withLock { $0.sleeping = false }
            }
        }
        tearDown()
    }

    private func start(_ transfer: CurlTransfer) {
        guard let handle = idleHandles.popLast() ?? makeHandle() else {
            transfer.state.notAdded()
            transfer.finish(
                .failure(HTTPError(.network, "curl_easy_init failed", url: transfer.displayURL)))
            return
        }
        if transfer.channel != nil {
            transfer.unpause = { [weak self, weak transfer] in
                if let self, let transfer { self.unpause(transfer) }
            }
        }
        handle.prepare(transfer, settings: settings)
        let code = curl_multi_add_handle(multi, handle.raw)
        guard code == CURLM_OK else {
            transfer.state.notAdded()
            transfer.finish(
                .failure(
                    HTTPError(
                        .network, String(cString: curl_multi_strerror(code)),
                        url: transfer.displayURL, underlyingCode: Int(code.rawValue))))
            recycle(handle)
            return
        }
        active[handle.raw] = (transfer, handle)
        transfer.state.added(handle.raw)
        counters.withLock { $0.activeTransfers = active.count }
    }

    private func drop(_ transfer: CurlTransfer) {
        // Queued: its flag stops it when it is admitted. Finished: nothing left to stop.
        guard let raw = transfer.state.cancel() else { return }
        guard let (_, handle) = active.removeValue(forKey: raw) else {
            return assertionFailure("a transfer in the multi handle is not active")
        }
        curl_multi_remove_handle(multi, raw)
        counters.withLock { $0.activeTransfers = active.count }
        recycle(handle)
        transfer.finish(.failure(cancelledError(transfer)))
    }

    private func collectFinished() {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let raw = message.pointee.easy_handle,
                let (transfer, handle) = active.removeValue(forKey: raw)
            else { continue }
            let code = message.pointee.data.result
            curl_multi_remove_handle(multi, raw)
            counters.withLock {
                $0.activeTransfers = active.count
                $0.completedTransfers += 1
            }
            let result = transfer.outcome(of: code, on: handle).result
            let answered: Bool
            if case .success = result { answered = true } else { answered = false }
            if answered { transfer.reportFinalProgress(on: handle) }
            transfer.state.curlFinished(answered: answered)
            transfer.finish(result)
            recycle(handle)
        }
    }

    private func makeHandle() -> CurlEasyHandle? {
        guard let handle = CurlEasyHandle() else { return nil }
        counters.withLock { $0.liveHandles += 1 }
        return handle
    }

    private func recycle(_ handle: CurlEasyHandle) {
        if idleHandles.count < settings.maxIdleHandles {
            idleHandles.append(handle)
        } else {
            counters.withLock { $0.liveHandles -= 1 }
        }
    }

    private func cancelledError(_ transfer: CurlTransfer) -> HTTPError {
        CurlOutcome.error(.byCaller, url: transfer.displayURL)
    }

    private func tearDown() {
        let (leftovers, jobs) = inbox.withLock { inbox -> ([CurlTransfer], [UnownedJob]) in
            inbox.stopped = true
            defer {
                inbox.submissions.removeAll()
                inbox.jobs.removeAll()
            }
            return (inbox.submissions, inbox.jobs)
        }
        // Tasks that preferred this loop go on elsewhere.
        runElsewhere(jobs)
        for transfer in leftovers {
            _ = transfer.state.admit(cancelled: true)
            transfer.finish(.failure(cancelledError(transfer)))
        }
        for (raw, (transfer, _)) in active {
            _ = transfer.state.cancel()
            curl_multi_remove_handle(multi, raw)
            transfer.finish(
                .failure(CurlOutcome.error(.byShutdown, url: transfer.displayURL)))
        }
        let dropped = active.count + idleHandles.count
        active.removeAll()
        idleHandles.removeAll()
        curl_multi_cleanup(multi)
        counters.withLock {
            $0.liveHandles -= dropped
            $0.activeTransfers = 0
        }
        finished.signal()
    }
}
