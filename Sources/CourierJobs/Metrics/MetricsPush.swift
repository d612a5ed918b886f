import Courier
import CourierCurl
import Foundation

/// `courier run --metrics-push URL [--metrics-interval SECONDS]`.
struct MetricsPushSettings: Sendable {
    /// The Pushgateway's address (`http://pushgateway:9091`, or a path under a proxy). A
    /// secret: whoever has it can push figures for the job, and it may carry credentials.
    var gateway: URL
    /// Seconds between pushes while the run goes on.
    var interval: TimeInterval = MetricsSettings.defaultInterval
}

/// A run's figures pushed to a Prometheus Pushgateway, for a run where no node_exporter reads
/// a metrics file (a Kubernetes CronJob's pod, a host without one): the same text as the file
/// (``RunMetricsText``), in the group of the job and its shard.
///
/// Each push is a `POST`, which replaces only the metrics it carries: a run that fails pushes
/// no `courier_last_success_timestamp_seconds`, so the gateway keeps the last success's, as the
/// file carries it over. Pushes go out one after another, never two at once (a late tick's
/// push cannot land after the last one), each bounded by ``timeout``; a failure never changes
/// the run's exit code.
final class MetricsPush: Sendable {
    /// Why a push was not taken, in words that never show the gateway's URL.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let text: RunMetricsText
    private let url: URL
    private let client: CurlHTTPClient
    /// The push before this one: the next waits for it.
    private let previous = Locked<Task<Failure?, Never>?>(nil)
    /// Set by the last push: nothing is pushed after it.
    private let finished = Locked(false)
    static let timeout: TimeInterval = 10

    init(settings: MetricsPushSettings, job: String, shard: Shard?) {
        text = RunMetricsText(job: job, shard: shard?.description ?? "whole")
        url = Self.groupURL(gateway: settings.gateway, job: job, shard: text.shard)
        client = CurlHTTPClient(configuration: .init(timeout: Self.timeout))
    }

    deinit { client.shutdown() }

    /// The group's URL: `GATEWAY/metrics/job@base64/JOB/shard@base64/SHARD`. The Pushgateway
    /// takes a label value in base64url when it is marked `@base64`: a job's name or a shard
    /// (`2/4`) may hold a `/`, which a plain path segment cannot.
    static func groupURL(gateway: URL, job: String, shard: String) -> URL {
        func segment(_ value: String) -> String {
            // An empty value is `=` (base64 of nothing, as the Pushgateway spells it).
            guard !value.isEmpty else { return "=" }
            return Data(value.utf8).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_")
        }
        guard var components = URLComponents(url: gateway, resolvingAgainstBaseURL: false)
        else { return gateway }
        var path = components.percentEncodedPath
        while path.hasSuffix("/") { path.removeLast() }
        // The group's path after the gateway's own (a proxy's prefix); its query, if any, kept.
        components.percentEncodedPath =
            path + "/metrics/job@base64/\(segment(job))/shard@base64/\(segment(shard))"
        return components.url ?? gateway
    }

    /// Pushes `snapshot`'s figures after the pushes before it; `final` makes this the last.
    /// Returns why it failed, or `nil` (pushed, or after the last: dropped).
    func push(_ snapshot: MetricsSnapshot, final: Bool) async -> Failure? {
        let accepted = finished.withLock { finished -> Bool in
            guard !finished else { return false }
            if final { finished = true }
            return true
        }
        guard accepted else { return nil }
        let body = Data(text.render(snapshot).utf8)
        let task = previous.withLock { previous -> Task<Failure?, Never> in
            let before = previous
            let task = Task { [client, url] () -> Failure? in
                _ = await before?.value
                return await Self.send(body, to: url, client: client)
            }
            previous = task
            return task
        }
        return await task.value
    }

    private static func send(_ body: Data, to url: URL, client: CurlHTTPClient) async -> Failure? {
        let request = HTTPRequest(
            url: url, method: .post,
            headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8"], body: body,
            timeout: timeout)
        do {
            let response = try await client.perform(request)
            guard (200..<300).contains(response.status) else {
                let answer = String(decoding: response.body.prefix(200), as: UTF8.self)
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                return Failure(
                    description: "the gateway answered \(response.status)"
                        + (answer.isEmpty ? "" : ": \(answer)"))
            }
            return nil
        } catch {
            // The error's kind only: its message names the URL.
            let kind = (error as? HTTPError)?.kind.rawValue ?? "error"
            return Failure(description: "no answer (\(kind))")
        }
    }
}
