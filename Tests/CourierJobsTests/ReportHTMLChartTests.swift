import Testing

@testable import CourierJobs

/// The HTML report's charts: axes a person reads.
@Suite("ReportHTML charts")
struct ReportHTMLChartTests {
    /// The latency distribution counts attempts: its axis steps are whole numbers (trial S
    /// read 0.50 and 1.50 attempts on a run of two).
    @Test func theDistributionsAxisCountsWholeAttempts() {
        var histogram = LatencyHistogram()
        histogram.record(milliseconds: 3)
        histogram.record(milliseconds: 3.1)
        let svg = ReportHTML.distribution(histogram)
        for label in ["0", "1", "2", "3", "4"] {
            #expect(svg.contains("text-anchor='end'>\(label)</text>"), "\(label)")
        }
        #expect(!svg.contains(">0.50<") && !svg.contains(">1.50<"))
        #expect(ReportHTML.tickLabel(2.5) == "2.50" && ReportHTML.tickLabel(120) == "120")
    }
}
