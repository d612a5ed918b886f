import Courier
import Foundation

/// Where a run says that it started and how it ended (`notify` in a job file, `--ping-url`):
/// a dead man's switch such as healthchecks.io or Cronitor, which raises the alarm when the
/// pings stop coming.
///
/// `ping` is a healthchecks.io check URL: the run posts to `URL/start` when it starts and to
/// `URL/<exit code>` when it ends (`URL/0` is a success, any other code a failure). `start`,
/// `success` and `failure` are URLs of their own, each replacing what `ping` gives for that
/// event, for services that name their events otherwise (Cronitor's `?state=run`,
/// `?state=complete`, `?state=fail`); `{exitCode}` in them is replaced by the exit code.
///
/// Every ping URL is a secret: it holds the check's key, and anyone who has it can report the
/// job done. ``secrets`` gives each form of it the run's redactor must know.
struct NotifySettings: Sendable, Hashable {
    /// What a ping says.
    enum Event: String, Sendable, CaseIterable {
        case start, success, failure
    }

    /// The healthchecks.io-style check URL.
    var ping: String?
    /// Explicit URLs, each winning over `ping` for its event.
    var start: String?
    var success: String?
    var failure: String?
    /// Seconds a ping may take in all, its retries included.
    var timeout: TimeInterval = NotifySettings.defaultTimeout

    /// A ping's whole time, retries included, unless `notify.timeout` says otherwise.
    static let defaultTimeout: TimeInterval = 10
    /// Attempts after the first, when the first failed quickly (refused, a 5xx).
    static let retries = 2
    /// What `success` and `failure` URLs may hold, replaced by the run's exit code.
    static let exitCodePlaceholder = "{exitCode}"

    init(
        ping: String? = nil, start: String? = nil, success: String? = nil,
        failure: String? = nil, timeout: TimeInterval = NotifySettings.defaultTimeout
    ) {
        self.ping = ping
        self.start = start
        self.success = success
        self.failure = failure
        self.timeout = timeout
    }

    /// The event a run that ended with `exitCode` reports.
    static func event(forExitCode exitCode: Int32) -> Event {
        exitCode == 0 ? .success : .failure
    }

    /// The URL to post `event` to, `nil` when nothing is to be sent for it. The end of a run
    /// under `ping` goes to `ping/<exit code>`, which healthchecks.io reads as a success for
    /// 0 and a failure for anything else.
    func url(for event: Event, exitCode: Int32 = 0) -> URL? {
        let explicit: String? =
            switch event {
            case .start: start
            case .success: success
            case .failure: failure
            }
        if let explicit {
            return Origin.httpURL(
                explicit.replacingOccurrences(of: Self.exitCodePlaceholder, with: "\(exitCode)"))
        }
        guard let ping, let base = Origin.httpURL(ping) else { return nil }
        return Self.appending(event == .start ? "start" : "\(exitCode)", to: base)
    }

    /// `base` with one more path segment, its query kept (`…/uuid?create=1` →
    /// `…/uuid/start?create=1`).
    static func appending(_ segment: String, to base: URL) -> URL? {
        guard var components = URLComponents(url: base, resolvingAgainstBaseURL: false) else {
            return nil
        }
        var path = components.percentEncodedPath
        while path.hasSuffix("/") { path.removeLast() }
        components.percentEncodedPath = path + "/" + segment
        return components.url
    }

    /// Every value of these settings that must never be written: each URL as given, and the
    /// parts of it that carry the check's key (its path and query, and a long path segment
    /// such as a UUID or a ping key), so that a URL made from it, or a message quoting a part
    /// of it, is redacted too.
    var secrets: Set<String> {
        var found = Set<String>()
        for text in [ping, start, success, failure].compactMap({ $0 }) where !text.isEmpty {
            found.insert(text)
            let template = text.replacingOccurrences(of: Self.exitCodePlaceholder, with: "")
            guard let components = URLComponents(string: template) else { continue }
            let path = components.percentEncodedPath
            if path.count >= 8 { found.insert(path) }
            if let query = components.percentEncodedQuery, query.count >= 8 { found.insert(query) }
            for segment in path.split(separator: "/") where segment.count >= 16 {
                found.insert(String(segment))
            }
        }
        return found
    }
}
