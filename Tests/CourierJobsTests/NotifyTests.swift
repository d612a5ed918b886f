import Courier
import CourierTestSupport
import Foundation
import Testing

@testable import CourierJobs

/// `notify`: the URLs each ping goes to, what counts as a secret, how the job file says it,
/// when a failed ping is sent again, and the bound that holds whatever the transport does.
@Suite("notify pings")
struct NotifyTests {
    static let check = "https://hc-ping.example/0b5e6f7a-1111-2222-3333-444455556666"

    @Test("ping gives URL/start and URL/<exit code>, its query kept, a trailing slash dropped")
    func healthchecksForm() {
        let settings = NotifySettings(ping: Self.check + "?create=1")
        #expect(settings.url(for: .start)?.absoluteString == Self.check + "/start?create=1")
        #expect(
            settings.url(for: .success, exitCode: 0)?.absoluteString == Self.check + "/0?create=1")
        #expect(
            settings.url(for: .failure, exitCode: 143)?.absoluteString
                == Self.check + "/143?create=1")
        let slash = NotifySettings(ping: Self.check + "/")
        #expect(slash.url(for: .start)?.absoluteString == Self.check + "/start")
    }

    @Test("explicit URLs win for their event, with {exitCode} replaced; others fall back to ping")
    func explicitForm() {
        let settings = NotifySettings(
            ping: Self.check,
            failure: "https://cronitor.example/p/KEY123/nightly?state=fail&status_code={exitCode}")
        #expect(settings.url(for: .start)?.absoluteString == Self.check + "/start")
        #expect(settings.url(for: .success)?.absoluteString == Self.check + "/0")
        #expect(
            settings.url(for: .failure, exitCode: 1)?.absoluteString
                == "https://cronitor.example/p/KEY123/nightly?state=fail&status_code=1")
        let onlyFailure = NotifySettings(failure: "https://alerts.example/fail")
        #expect(onlyFailure.url(for: .start) == nil && onlyFailure.url(for: .success) == nil)
        #expect(NotifySettings.event(forExitCode: 0) == .success)
        #expect(NotifySettings.event(forExitCode: 2) == .failure)
    }

    @Test("the secrets cover every URL made from a ping URL, and the key alone")
    func secretsCoverDerivedURLs() {
        let settings = NotifySettings(ping: Self.check + "?create=1")
        let redactor = Redactor(secrets: settings.secrets)
        for event in NotifySettings.Event.allCases {
            let url = settings.url(for: event, exitCode: 1)!.absoluteString
            #expect(!redactor.scrub("sent to \(url)").contains("0b5e6f7a"), "\(url)")
        }
        #expect(
            !redactor.scrub("check 0b5e6f7a-1111-2222-3333-444455556666 is down")
                .contains("0b5e6f7a"))
        // The host alone is no secret: messages may name it.
        #expect(redactor.scrub("hc-ping.example") == "hc-ping.example")
    }

    @Test("a job's notify reads from the environment; its value is a secret")
    func decodes() throws {
        let job = try ExpansionTests.load(
            ExpansionTests.job(
                tasks: #"{"id": "a", "path": "/a"}"#,
                extra: #""notify": {"ping": "${env:HC_PING_URL}", "timeout": 3},"#),
            environment: ["HC_PING_URL": Self.check])
        #expect(job.notify == NotifySettings(ping: Self.check, timeout: 3))
        #expect(job.secrets.contains(Self.check))
        #expect(job.secrets.contains("0b5e6f7a-1111-2222-3333-444455556666"))
    }

    @Test(
        "a bad notify is refused without quoting its URL",
        arguments: [
            (#"{"ping": "ftp://x.example/0b5e6f7a-secret-key"}"#, "notify.ping"),
            (#"{"ping": "not a url 0b5e6f7a-secret-key"}"#, "notify.ping"),
            (#"{"start": "https://x.example/0b5e6f7a-secret-key/{exitCode}"}"#, "notify.start"),
            (#"{"timeout": 5}"#, "notify"),
            (#"{"ping": "https://x.example/0b5e6f7a-secret-key", "timeout": 0}"#, "notify.timeout"),
            (#"{"ping": "https://x.example/0b5e6f7a-secret-key", "retries": 5}"#, "notify.retries"),
        ])
    func refusals(notify: String, path: String) throws {
        let errors = try #require(throws: JobFileErrors.self) {
            try ExpansionTests.load(
                ExpansionTests.job(
                    tasks: #"{"id": "a", "path": "/a"}"#, extra: #""notify": \#(notify),"#))
        }
        let text = errors.errors.map { "\($0)" }.joined(separator: "\n")
        #expect(text.contains(path), "\(text)")
        #expect(!text.contains("0b5e6f7a"), "the URL is a secret: \(text)")
    }

    @Test("${file:$CREDENTIALS_DIRECTORY/…} reads systemd's credentials folder")
    func credentialsDirectory() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-credentials-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try (Self.check + "\n").write(
            to: folder.appendingPathComponent("hc-ping-url"), atomically: true, encoding: .utf8)
        let text = ExpansionTests.job(
            tasks: #"{"id": "a", "path": "/a"}"#,
            extra: #""notify": {"ping": "${file:$CREDENTIALS_DIRECTORY/hc-ping-url}"},"#)
        let job = try ExpansionTests.load(
            text, environment: ["CREDENTIALS_DIRECTORY": folder.path])
        #expect(job.notify?.ping == Self.check)
        #expect(job.secrets.contains(Self.check))
        let errors = try #require(throws: JobFileErrors.self) { try ExpansionTests.load(text) }
        #expect("\(errors.errors)".contains("CREDENTIALS_DIRECTORY is not set"))
    }

    @Test(
        "a quick failure is tried again twice while time is left; a 4xx other than 408/429 is not")
    func retryRule() {
        let retry = PingRetry(budget: 10, retries: 2)
        #expect(retry.delay(after: 1, retryable: true, elapsed: 0.1) == 0.5)
        #expect(retry.delay(after: 2, retryable: true, elapsed: 0.7) == 1)
        #expect(retry.delay(after: 3, retryable: true, elapsed: 1.8) == nil, "two retries at most")
        #expect(retry.delay(after: 1, retryable: false, elapsed: 0.1) == nil)
        #expect(retry.delay(after: 1, retryable: true, elapsed: 9.2) == nil, "no time left")
        #expect(PingRetry.isRetryable(status: nil) && PingRetry.isRetryable(status: 503))
        #expect(PingRetry.isRetryable(status: 429) && PingRetry.isRetryable(status: 408))
        #expect(!PingRetry.isRetryable(status: 404) && !PingRetry.isRetryable(status: 400))
    }

    @Test("the bound holds over work that ignores cancellation")
    func deadlineHolds() async {
        let clock = ContinuousClock()
        let began = clock.now
        let value: Int? = await Deadline.within(0.2) {
            // Work that never looks at its cancellation: a wait of 300 s off the pool (a
            // cancelled Task.sleep returns at once, and a loop of them would spin instead).
            await withCheckedContinuation { continuation in
                DispatchQueue.global().asyncAfter(deadline: .now() + 300) {
                    continuation.resume()
                }
            }
            return 1
        }
        #expect(value == nil)
        // A generous bound: the work takes 300 s, and a test run's blocking tests can hold the
        // cooperative pool, where the bound's timer resumes, for half a minute (seen: 26 s).
        #expect(began.duration(to: clock.now) < .seconds(120))
        #expect(await Deadline.within(5) { 7 } == 7)
    }

    @Test("a cancelled caller is let go at once")
    func deadlineCancelled() async {
        let task = Task {
            await Deadline.within(30) {
                try? await Task.sleep(for: .seconds(30))
                return 1
            }
        }
        task.cancel()
        let value = await task.value
        #expect(value == nil)
    }

    @Test("a failed ping's warning names what and why, never a URL; a superseded one has none")
    func warnings() {
        var result = PingResult(event: .failure, exitCode: 1, started: Date())
        result.attempts = 3
        #expect(result.warning(job: "j") == nil)
        result.failure = ("status", "answered 503, not 2xx")
        #expect(
            result.warning(job: "j")
                == "courier: j: warning: the failure ping (notify) failed after 3 attempts: status: answered 503, not 2xx; the exit code stays 1"
        )
        var start = PingResult(event: .start, started: Date())
        start.failure = ("cancelled", "the run ended before the ping was answered")
        start.superseded = true
        #expect(start.warning(job: "j") == nil)
    }
}
