/// JUnit XML for CI dashboards: a test suite per job, a test case per task, failed tasks as
/// failures and skipped ones as skipped.
enum ReportJUnit {
    static func render(_ reports: [RunReport]) -> String {
        var xml = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n<testsuites>\n"
        for report in reports {
            let tasks = report.tasks.values.sorted { $0.task < $1.task }
            xml +=
                #"  <testsuite name="\#(escape(report.job))" tests="\#(tasks.count)" failures="\#(report.failedCount)" skipped="\#(report.skippedCount)" time="\#(report.wallSeconds)">"#
                + "\n"
            for task in tasks {
                let time = (task.totalMs ?? 0) / 1000
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

    /// XML attribute text: markup characters escaped, control characters XML 1.0 forbids dropped.
    static func escape(_ text: String) -> String {
        var output = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": output += "&amp;"
            case "<": output += "&lt;"
            case ">": output += "&gt;"
            case "\"": output += "&quot;"
            case "\n": output += "&#10;"
            case "\t": output += "&#9;"
            default:
                if scalar.value >= 0x20 && scalar.value != 0xFFFE && scalar.value != 0xFFFF {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        return output
    }
}
