import Courier
import Foundation

/// `courier bench`'s table for a person: what was measured, then each backend's medians.
extension BenchCommand {
    /// What the rounds were: requests (or seconds) a round, in flight, the warm-up (trial S:
    /// the table did not say how many requests it had measured, nor at what concurrency).
    static func heading(_ options: Options) -> String {
        let round =
            options.duration.map { "\(ReportText.format($0)) s" }
            ?? "\(options.count) request\(options.count == 1 ? "" : "s")"
        // As the rounds are given it (trial QQ: "1000" of a paced warm-up of 20).
        let warmup = options.warmup ?? defaultWarmup(options)
        let pace = options.rate.map { ", \(ReportText.format($0)) requests a second" } ?? ""
        return
            "courier bench: \(options.rounds) round\(options.rounds == 1 ? "" : "s") of \(round) a backend, \(options.concurrency) in flight\(pace), after a warm-up of \(warmup) request\(warmup == 1 ? "" : "s") each"
    }

    /// `paced` (`--rate`): every backend sends at the rate, so the last column compares the
    /// CPU a request took, not requests a second (trial CCC: always 1.00).
    static func table(_ summaries: [BenchSummary], paced: Bool = false) -> String {
        let first = summaries.first?.backend ?? ""
        let header = [
            "backend", "rounds", "req/s", "p50 ms", "p90", "p99", "p99.9", "max", "errors",
            "non-2xx", "cpu µs/req", "peak RSS", "conns", paced ? "cpu vs \(first)" : "vs \(first)",
        ]
        var rows = [header]
        let measure = { (summary: BenchSummary) in
            paced ? summary.cpuMicrosecondsPerRequest : summary.requestsPerSecond
        }
        let reference = summaries.first.map(measure) ?? 0
        for summary in summaries {
            let latency =
                [50, 90, 99, 99.9].map { summary.latency.percentile($0) } + [
                    summary.latency.maxMilliseconds
                ]
            rows.append(
                [
                    summary.backend, String(summary.rounds.count),
                    String(Int(summary.requestsPerSecond.rounded())),
                ]
                    + latency.map(ReportText.format)
                    + [
                        summary.errorsText, String(summary.non2xx),
                        String(format: "%.1f", summary.cpuMicrosecondsPerRequest),
                        "\(summary.peakRSS >> 20) MiB",
                        summary.connections.map(String.init) ?? "n/a",
                        reference > 0
                            ? String(format: "%.2f", measure(summary) / reference) : "-",
                    ])
        }
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { column, cell in
                column == 0
                    ? cell.padding(toLength: widths[0], withPad: " ", startingAt: 0)
                    : cell.leftPadded(widths[column])
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}
