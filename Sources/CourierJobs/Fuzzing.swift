import Courier
import Foundation

/// Entry points for the fuzzers (`make fuzz`, `Sources/courier-fuzz`); not part of the API.
/// Each takes any bytes; a crash, a trap or a failed check below is a finding.
package enum JobsFuzzing {
    /// The job-file decoder and, for a file it accepts, validation (which counts the tasks
    /// without expanding them).
    package static func jobFile(_ data: Data) {
        let file = URL(fileURLWithPath: "/nonexistent/courier-fuzz/job.json")
        guard let job = try? JobDecoder.decode(data, file: file, environment: ["TOKEN": "t"])
        else { return }
        // A job of a million tasks checked one by one is a legitimate minute under the
        // fuzzer's instrumentation, not a finding: such jobs are decoded, not validated. Jobs
        // past the validator's limit are, since it must refuse them at once.
        let provable = Set(
            job.tasks.filter { StaticValidation.provableCount(of: $0, in: job) != nil }.map(\.path))
        let (expanded, _) = JobValidator.oneByOneCount(job, skipping: provable)
        guard expanded <= 20_000 || expanded > JobValidator.oneByOneLimit else { return }
        _ = try? JobValidator.validate(job)
    }

    /// The template engine: parsing, the variables it names, and rendering, whose byte count
    /// must equal what ``Template/renderedByteCount(_:)`` says without rendering.
    package static func template(_ data: Data) {
        let text = String(decoding: data, as: UTF8.self)
        let template = Template(text)
        var bindings: [String: String] = [:]
        for (offset, name) in template.variables.enumerated() where offset % 2 == 0 {
            bindings[name] = String(repeating: "é", count: offset)
        }
        let rendered = template.render(bindings)
        precondition(
            rendered.utf8.count == template.renderedByteCount(bindings),
            "renderedByteCount disagrees with render")
        // Text without braces renders as itself. U+E000 is the environment brace
        // (``Template/environmentBrace``), which renders as `{` by design; the job decoder
        // refuses it in a job file and in a template's environment value (the fuzzer found it).
        if !text.utf8.contains(UInt8(ascii: "{")), !text.contains(Template.environmentBrace) {
            precondition(rendered == text)
        }
    }

    /// The log-line scanner, which must never accept what the JSON parser refuses as
    /// malformed (it claims to accept exactly JSON).
    package static func logLine(_ data: Data) {
        let bytes = [UInt8](data)
        guard LogLineScanner.parse(bytes[...]) != nil else { return }
        switch Result(catching: { () throws(JSONParser.Failure) in try JSONParser.parse(bytes) }) {
        case .success:
            break
        case .failure(let failure):
            // The scanner does not look for duplicate keys or count nesting; both parsers must
            // agree on everything else.
            precondition(
                failure.message.hasPrefix("duplicate key") || failure.message.hasPrefix("nesting"),
                "the log-line scanner accepted what the JSON parser refuses: \(failure.message)")
        }
    }
}
