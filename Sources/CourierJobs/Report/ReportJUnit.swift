import Courier

/// JUnit XML for CI dashboards: a test suite per job, a test case per task, failed tasks as
/// failures and skipped ones as skipped.
enum ReportJUnit {
    static func render(_ reports: [RunReport]) -> String {
        var xml = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n<testsuites>\n"
        for report in reports {
            let tasks = report.outcomes.all
            xml +=
                #"  <testsuite name="\#(escape(report.job))" tests="\#(tasks.count)" failures="\#(report.outcomes.failed)" skipped="\#(report.outcomes.skipped)" time="\#(seconds(report.wallSeconds))">"#
                + "\n"
            for task in tasks {
                let time = seconds((task.totalMs ?? 0) / 1000)
                xml +=
                    #"    <testcase classname="\#(escape(report.job))" name="\#(escape(task.task))" time="\#(time)""#
                switch task.outcome {
                case "ok":
                    xml += "/>\n"
                case "skipped":
                    xml +=
                        ">\n      <skipped message=\"\(escape(ReportText.describe(task)))\"/>\n    </testcase>\n"
                default:
                    xml +=
                        ">\n      <failure message=\"\(escape(ReportText.describe(task)))\" type=\"\(escape(task.errorKind ?? "unexpectedStatus"))\"/>\n    </testcase>\n"
                }
            }
            xml += "  </testsuite>\n"
        }
        return xml + "</testsuites>\n"
    }

    /// Seconds as a plain decimal (`0.000005`, never `5e-06`: JUnit readers parse `time` as
    /// a decimal, and some read an exponent as garbage), to the microsecond the log holds.
    static func seconds(_ value: Double) -> String {
        var text = String(format: "%.6f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    /// XML attribute text: markup characters escaped, control characters XML 1.0 forbids dropped.
    static func escape(_ text: String) -> String {
        ScalarEscaping.escape(text) { scalar in
            switch scalar {
            case "&": .replace("&amp;")
            case "<": .replace("&lt;")
            case ">": .replace("&gt;")
            case "\"": .replace("&quot;")
            case "\n": .replace("&#10;")
            case "\t": .replace("&#9;")
            case _ where scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF:
                .drop
            default: .keep
            }
        }
    }
}
