import Foundation

/// What a response says of the client's quota at its server: how many requests are left, and
/// when the quota is refilled. A pure reading of the header fields; ``HostThrottle`` acts on it.
///
/// Read, the first form present winning:
/// - `RateLimit: limit=100, remaining=5, reset=30` (IETF httpapi draft 07), or
///   `RateLimit: "hour";r=5;t=30` (drafts 08 and later; several policies: the one with the
///   fewest requests left), its limit from `RateLimit-Policy: "hour";q=100;w=3600`;
/// - `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` (the earlier drafts);
/// - `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` (GitHub and many
///   others).
///
/// A reset is delta-seconds; one that is clearly a Unix time (GitHub's `X-RateLimit-Reset`:
/// 10^9 or more, which as a delay would be 31 years) is taken as seconds since 1970, and
/// 10^12 or more as milliseconds.
public struct RateLimitQuota: Sendable, Hashable {
    /// The requests the quota allows in its window, when the server says.
    public var limit: Int?
    /// The requests left before the server refuses.
    public var remaining: Int
    /// Seconds until the quota is refilled, when the server says.
    public var reset: TimeInterval?

    public init(limit: Int? = nil, remaining: Int, reset: TimeInterval? = nil) {
        self.limit = limit
        self.remaining = remaining
        self.reset = reset
    }

    /// The quota the headers announce, or `nil` when they name no remaining count. `now` turns
    /// a reset given as a Unix time into seconds from now.
    public static func parse(_ headers: HTTPHeaders, now: Date) -> RateLimitQuota? {
        var fields = Fields()
        for field in headers {
            // Most responses carry none of these: one look at the first letter passes them by.
            guard let first = field.name.utf8.first,
                first | 0x20 == UInt8(ascii: "r") || first | 0x20 == UInt8(ascii: "x")
            else { continue }
            fields.take(field)
        }
        if let combined = fields.combined,
            var quota = fromCombined(combined, policy: fields.policy)
        {
            quota.reset = quota.reset.flatMap { resetSeconds($0, now: now) }
            return quota
        }
        for (limit, remaining, reset) in [fields.draft, fields.common] {
            guard let remaining = remaining.flatMap(integer) else { continue }
            let limit = limit.flatMap(leadingInteger) ?? fields.policy.flatMap { policyLimit($0) }
            return RateLimitQuota(
                limit: limit, remaining: max(0, remaining),
                reset: reset.flatMap(number).flatMap { resetSeconds($0, now: now) })
        }
        return nil
    }

    /// The fields of one response that speak of quotas.
    private struct Fields {
        var combined: String?
        var policy: String?
        var draft: (limit: String?, remaining: String?, reset: String?)
        var common: (limit: String?, remaining: String?, reset: String?)

        mutating func take(_ field: HTTPHeaders.Field) {
            // The first field of each name counts.
            switch field.name.lowercased() {
            case "ratelimit": combined = combined ?? field.value
            case "ratelimit-policy": policy = policy ?? field.value
            case "ratelimit-limit": draft.limit = draft.limit ?? field.value
            case "ratelimit-remaining": draft.remaining = draft.remaining ?? field.value
            case "ratelimit-reset": draft.reset = draft.reset ?? field.value
            case "x-ratelimit-limit": common.limit = common.limit ?? field.value
            case "x-ratelimit-remaining": common.remaining = common.remaining ?? field.value
            case "x-ratelimit-reset": common.reset = common.reset ?? field.value
            default: break
            }
        }
    }

    /// `RateLimit`: draft 07's `limit=, remaining=, reset=` items, or later drafts' policies
    /// with `r` (remaining) and `t` (reset) parameters.
    private static func fromCombined(_ value: String, policy: String?) -> RateLimitQuota? {
        var draft07: (limit: Int?, remaining: Int?, reset: Double?)
        var best: (name: String, remaining: Int, reset: Double?)?
        for item in items(value) {
            if let remaining = item.parameters["r"].flatMap(integer) {
                let reset = item.parameters["t"].flatMap(number)
                if best == nil || remaining < best!.remaining {
                    best = (item.name, remaining, reset)
                }
            }
            draft07.limit = draft07.limit ?? item.parameters["limit"].flatMap(integer)
            draft07.remaining = draft07.remaining ?? item.parameters["remaining"].flatMap(integer)
            draft07.reset = draft07.reset ?? item.parameters["reset"].flatMap(number)
        }
        if let best {
            return RateLimitQuota(
                limit: policy.flatMap { policyLimit($0, named: best.name) },
                remaining: max(0, best.remaining), reset: best.reset)
        }
        guard let remaining = draft07.remaining else { return nil }
        return RateLimitQuota(
            limit: draft07.limit ?? policy.flatMap { policyLimit($0) },
            remaining: max(0, remaining), reset: draft07.reset)
    }

    /// `RateLimit-Policy`'s quota: `"name";q=100;w=60` (the named policy, else the first), or
    /// draft 07's `100;w=60`.
    private static func policyLimit(_ value: String, named name: String? = nil) -> Int? {
        let policies = items(value)
        let policy = policies.first { name != nil && $0.name == name } ?? policies.first
        guard let policy else { return nil }
        return policy.parameters["q"].flatMap(integer) ?? leadingInteger(policy.name)
    }

    /// The comma-separated items of a structured field, each a leading token (a policy name,
    /// unquoted) and its `;key=value` parameters; a bare `key=value` item is a parameter.
    private static func items(_ value: String) -> [(name: String, parameters: [String: String])] {
        value.split(separator: ",").map { item in
            var name = ""
            var parameters: [String: String] = [:]
            for (index, part) in item.split(separator: ";").enumerated() {
                let piece = part.trimmingCharacters(in: .whitespaces)
                if let equals = piece.firstIndex(of: "=") {
                    let key = piece[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
                    parameters[key] = unquoted(piece[piece.index(after: equals)...])
                } else if index == 0 {
                    name = unquoted(piece[...])
                }
            }
            return (name, parameters)
        }
    }

    private static func unquoted(_ text: Substring) -> String {
        var text = text.trimmingCharacters(in: .whitespaces)
        if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") {
            text = String(text.dropFirst().dropLast())
        }
        return text
    }

    private static func integer(_ text: String) -> Int? {
        Int(text.trimmingCharacters(in: .whitespaces))
    }

    /// The first item's number, as in `RateLimit-Limit: 100, 100;w=60`.
    private static func leadingInteger(_ text: String) -> Int? {
        let first = text.split(separator: ",").first.map(String.init) ?? text
        return integer(first.split(separator: ";").first.map(String.init) ?? first)
    }

    private static func number(_ text: String) -> Double? {
        guard let value = Double(text.trimmingCharacters(in: .whitespaces)), value.isFinite
        else { return nil }
        return value
    }

    /// A reset as seconds from now: delta-seconds as they are, a Unix time (seconds from
    /// 10^9, milliseconds from 10^12) as the time left until it; `nil` when negative.
    static func resetSeconds(_ value: Double, now: Date) -> TimeInterval? {
        guard value >= 0 else { return nil }
        if value >= 1e12 { return max(0, value / 1000 - now.timeIntervalSince1970) }
        if value >= 1e9 { return max(0, value - now.timeIntervalSince1970) }
        return value
    }
}
