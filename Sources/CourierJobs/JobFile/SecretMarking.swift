import Courier
import Foundation

/// Marks the parts of a built request that hold a secret in an ordinary place, so that a
/// redirect to another origin drops them (``RedirectState``): a header whose value holds one of
/// the job's secrets (an `${env:…}` value, an auth value) or a secret capture (`{token}` from a
/// login), and a body that holds one, which a 307/308 would carry there and is refused instead.
/// `Authorization`, `Cookie` and the API-key headers are secret by name already.
enum SecretMarking {
    /// Secrets shorter than this are not searched for in values: a two-digit secret would
    /// mark every header with that number (the redactor's rule for free text too).
    static let shortest = 4

    static func mark(
        _ request: inout HTTPRequest, spec: TaskSpec, templates: CompiledTemplates, job: Job
    ) {
        let secretCaptures = spec.inputs.isEmpty ? [] : secretCaptureNames(job)
        for header in templates.headers
        where header.value.variables.contains(where: secretCaptures.contains) {
            request.secretHeaderNames.insert(header.name)
        }
        if !job.secrets.isEmpty {
            for field in request.headers where holdsSecret(field.value, job.secrets) {
                request.secretHeaderNames.insert(field.name)
            }
        }
        guard let body = request.body, !body.isEmpty else { return }
        if !job.secrets.isEmpty, holdsSecret(String(decoding: body, as: UTF8.self), job.secrets) {
            request.bodyIsSecret = true
        } else if !secretCaptures.isEmpty,
            bodyVariables(spec, templates).contains(where: secretCaptures.contains)
        {
            request.bodyIsSecret = true
        }
    }

    /// Whether `text` holds a secret, as it is or JSON-escaped (a body's strings are).
    static func holdsSecret(_ text: String, _ secrets: Set<String>) -> Bool {
        secrets.contains { secret in
            guard secret.utf8.count >= shortest else { return false }
            if text.holdsBytes(of: secret) { return true }
            // Most secrets have nothing JSON escapes: no escaped form to build per task.
            guard
                secret.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 == 0x2F })
            else { return false }
            let escaped = String(JSONWriter.string(.string(secret)).dropFirst().dropLast())
            return escaped.utf8.count != secret.utf8.count && text.holdsBytes(of: escaped)
        }
    }

    /// The captures marked `secret` anywhere in the job.
    static func secretCaptureNames(_ job: Job) -> Set<String> {
        Set(job.tasks.flatMap { $0.captures.filter(\.secret).map(\.name) })
    }

    /// The variables a body template uses: a text body's, or those in a JSON body's strings.
    static func bodyVariables(_ spec: TaskSpec, _ templates: CompiledTemplates) -> [String] {
        switch spec.body {
        case .text: return templates.body?.variables ?? []
        case .json(let node): return variables(in: node)
        case .file, nil: return []
        }
    }

    private static func variables(in node: JSONNode) -> [String] {
        switch node.value {
        case .string(let text): return Template(text).variables
        case .array(let items): return items.flatMap(variables(in:))
        case .object(let members): return members.flatMap { variables(in: $0.node) }
        case .null, .bool, .number: return []
        }
    }
}
