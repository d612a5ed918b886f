import Courier
import Foundation

/// Rebuilds the request of a logged task: method, URL, headers and body come from the log;
/// what the log redacted comes back from `--header` or from the same task of `--job`
/// (expanded now, with today's environment), or the request is refused.
struct ReplayBuilder {
    /// Why a logged request cannot be sent again.
    struct Refusal: Error, CustomStringConvertible {
        let task: String
        let reason: String
        var description: String { "task \(task): \(reason); not replayed" }
    }

    let job: Job?
    /// The job's tasks by id, for the ids being replayed.
    let jobTasks: [String: ExpandedTask]
    /// `--header` values, which win over the log and the job.
    let overrides: [(name: String, value: String)]
    /// The job's secrets: a job value stands in for a redacted one only when it redacts to
    /// what the log holds.
    let redactor: Redactor

    /// Refusals said on stderr as a run says its failures: the first of each reason in full,
    /// the others counted once at the end (trial CCC: 417 lines alike, a header redacted in
    /// the log, filled a cron mail).
    struct Refusals {
        private var counts: [(reason: String, more: Int)] = []

        mutating func add(_ refusal: Refusal, console: Console) {
            if let index = counts.firstIndex(where: { $0.reason == refusal.reason }) {
                counts[index].more += 1
            } else {
                counts.append((refusal.reason, 0))
                console.error("courier: \(refusal)")
            }
        }

        func finish(console: Console) {
            for (reason, more) in counts where more > 0 {
                console.error(
                    "courier: \(more) more task\(more == 1 ? "" : "s") not replayed the same way: \(reason)"
                )
            }
        }
    }

    private static let placeholder = Redactor.placeholder

    func build(_ line: LogLine) -> Result<ExpandedTask, Refusal> {
        let id = line.task ?? "?"
        func refuse(_ reason: String) -> Result<ExpandedTask, Refusal> {
            .failure(Refusal(task: id, reason: reason))
        }
        let jobTask = jobTasks[id]
        if let reason = Self.sentNothing(
            line, id: id, inJob: jobTask != nil, jobGiven: job?.tasks.isEmpty == false)
        {
            return refuse(reason)
        }
        guard let method = line.method, let loggedURL = line.url else {
            // A task that sent nothing (`task.failed`: it could not be built, or no token
            // could be had for it) is the job's task as the job builds it now.
            guard var task = jobTask, line.event == LogEvent.failed else {
                return refuse("the log line has no method or URL")
            }
            task.replayOf = ReplayOrigin(run: line.run, task: id)
            return .success(task)
        }
        let jobWire = jobTask.flatMap { try? WireRequest($0.request) }

        // The URL: the job's when it redacts to the logged one (it may hold a secret).
        var url = URL(string: loggedURL)
        if let jobTask, redactor.scrub(jobTask.request.displayURL.absoluteString) == loggedURL {
            url = jobTask.request.url
        } else if loggedURL.contains(Self.placeholder) {
            return refuse(
                jobTask == nil
                    ? "its URL held a secret; give --job with this task to supply it"
                    : "its URL held a secret, and the job's task \(id) now builds a different URL")
        }
        guard let url else { return refuse("the logged URL \(loggedURL) is not valid") }

        let headers: HTTPHeaders
        let secretNames: Set<String>
        switch rebuiltHeaders(of: line, jobTask: jobTask, jobWire: jobWire) {
        case .success(let rebuilt): (headers, secretNames) = rebuilt
        case .failure(let refusal): return .failure(refusal)
        }
        let body: Data?
        switch rebuiltBody(of: line, jobTask: jobTask) {
        case .success(let rebuilt): body = rebuilt
        case .failure(let refusal): return .failure(refusal)
        }

        var request = HTTPRequest(
            url: url, method: HTTPMethod(method), headers: headers, body: body)
        request.secretHeaderNames.formUnion(secretNames)
        if let job { request.tls = job.tls }
        // A hand-written or edited line may ask what no transport sends (a `javascript:` URL,
        // a header value with a newline): refused here, so that the plan and the script
        // never show it as a request to send.
        do {
            _ = try WireRequest(request)
        } catch {
            return refuse("its logged request cannot be sent: \(error.message)")
        }
        if let jobTask {
            request.secretHeaderNames.formUnion(jobTask.request.secretHeaderNames)
            request.secretQueryNames.formUnion(jobTask.request.secretQueryNames)
            request.timeout = jobTask.request.timeout
        } else if let job {
            request.timeout = job.timeout
        }
        var task = ExpandedTask(
            .init(
                id: id, request: request, expectStatus: jobTask?.expectStatus,
                save: jobTask?.save, retry: jobTask?.retry ?? job?.retry ?? RetryPolicy(),
                specPath: jobTask?.specPath ?? "log",
                replayOf: ReplayOrigin(run: line.run, task: id)))
        Self.keepLogged(line, headers: headers, jobTask: jobTask, in: &task)
        return .success(task)
    }

    /// What a task rebuilt from `line` keeps of it: its `safe`, its digest and the header its
    /// key went in (its lines say them as the night's did), whether it asked if changed.
    private static func keepLogged(
        _ line: LogLine, headers: HTTPHeaders, jobTask: ExpandedTask?, in task: inout ExpandedTask
    ) {
        task.oauth2 = jobTask?.oauth2
        task.loggedSafe = line.safe
        // The same request as logged: its lines say the logged digest (trial OOO: none).
        task.writeDigest = line.safe ? nil : line.requestDigest
        if let key = line.idempotencyKey {
            task.loggedKeyHeader = headers.first { $0.value == key }?.name
        }
        // A logged conditional request (`If-None-Match`, `If-Modified-Since`) re-sent as
        // logged may well get 304 again: that is its success, as in the run.
        task.conditional =
            headers.contains("If-None-Match") || headers.contains("If-Modified-Since")
    }

    /// Why a line that records no request (a held write, a skipped task, a write's start
    /// when the job does not build it again: `inJob`) has none to send. `jobGiven`: `--job`
    /// named a job, which no longer builds the task (trial OOO: told to give `--job`).
    private static func sentNothing(_ line: LogLine, id: String, inJob: Bool, jobGiven: Bool)
        -> String?
    {
        // A write's `request.start` is the last word of a run killed while it was under way:
        // it names the method and URL, not the headers or body (trial BBB: a replay of the log
        // alone sent the charge again empty, without its key). The job builds it again.
        if line.event == LogEvent.requestStart, !inJob, jobGiven {
            return
                "its run was cut while its write was under way, its log line holds the request's start only, and the job no longer builds task \(id) (renamed or removed): `courier run JOB --resume` sends the job's tasks as it builds them now, and holds one that sends this write's request"
        }
        if line.event == LogEvent.requestStart, !inJob {
            return
                "its run was cut while its write was under way, and its log line holds the request's start only, not its headers or body: replay it with --job JOB, which builds it again (a write of unknown outcome goes again with its idempotency key, or, once you have checked the server, when named: --task \(id))"
        }
        if line.errorKind == LogErrorKind.writeHeld {
            return
                "it is a write a resume or replay held (\(line.errorMessage ?? "")); its line holds no request: replay it with --job JOB --task \(id)"
        }
        if line.outcome == LogOutcome.skipped.rawValue {
            return
                "it was skipped and sent nothing (an input task failed); `courier run --resume` runs it with its inputs"
        }
        return nil
    }

    /// The logged headers, each redacted one from `--header` or from the job's task when its
    /// value redacts to the logged one; the names of those that hold secrets. A `--header`
    /// the request did not carry is not added.
    private func rebuiltHeaders(
        of line: LogLine, jobTask: ExpandedTask?, jobWire: WireRequest?
    ) -> Result<(HTTPHeaders, Set<String>), Refusal> {
        let id = line.task ?? "?"
        func refuse(_ reason: String) -> Result<(HTTPHeaders, Set<String>), Refusal> {
            .failure(Refusal(task: id, reason: reason))
        }
        var headers = HTTPHeaders()
        var secretNames: Set<String> = []
        for (name, value) in line.requestHeaders {
            if let override = overrides.last(where: { $0.name.lowercased() == name.lowercased() }) {
                headers.add(name, override.value)
                secretNames.insert(name.lowercased())
                continue
            }
            guard value.contains(Self.placeholder) else {
                headers.add(name, value)
                continue
            }
            if jobTask?.oauth2 != nil, name.lowercased() == "authorization" {
                continue  // a fresh access token is asked for when the request is sent
            }
            // Redacted whole by name (Authorization, Cookie, …) or in part (a secret inside).
            guard let jobValue = jobWire?.headers[name],
                value == Self.placeholder || redactor.scrub(jobValue) == value
            else {
                return refuse(
                    "header \(name) was redacted in the log; give --job with this task, or --header '\(name): …'"
                )
            }
            headers.add(name, jobValue)
            secretNames.insert(name.lowercased())
        }
        // A header the request did not carry is not added: `--header` fills in what the log
        // redacted (trial S: a bearer token went with every replayed request, to requests
        // that never had one). Only a line that logged no header at all (an older log) takes
        // them all.
        for override in overrides where line.requestHeaders.isEmpty {
            headers.add(override.name, override.value)
            secretNames.insert(override.name.lowercased())
        }
        return .success((headers, secretNames))
    }

    /// The logged body, or the job's task's when it was too large to log or held a secret
    /// and the job's builds the same.
    private func rebuiltBody(of line: LogLine, jobTask: ExpandedTask?) -> Result<Data?, Refusal> {
        let id = line.task ?? "?"
        func refuse(_ reason: String) -> Result<Data?, Refusal> {
            .failure(Refusal(task: id, reason: reason))
        }
        let body: Data?
        switch line.requestBody {
        case nil:
            body = nil
        case .omitted(let bytes, let sha256):
            guard let jobBody = jobTask?.request.body, SHA256.hex(of: jobBody) == sha256 else {
                return refuse(
                    "its \(bytes)-byte body was too large to log, and no --job task builds the same body"
                )
            }
            body = jobBody
        case .text(let text) where text.contains(Self.placeholder):
            guard let jobBody = jobTask?.request.body,
                redactor.scrub(String(decoding: jobBody, as: UTF8.self)) == text
            else {
                return refuse("its body held a secret; give --job with this task to supply it")
            }
            body = jobBody
        case .undecodable(let reason):
            return refuse(
                "its logged body cannot be read back: \(reason) (was the log edited?), and sending no body in its place would be another request"
            )
        case .text, .base64:
            body = line.bodyBytes
        }
        return .success(body)
    }
}
