import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where every courier process of a user keeps each host's ``HostBudget``: a small document
/// per origin in a folder (`COURIER_HOSTS_DIR`, else `$XDG_STATE_HOME/courier/hosts`, else
/// `~/.local/state/courier/hosts`), changed under an `flock` of its own lock file. The kernel
/// lets a lock go when its process dies, even by `kill -9`, so no stale lock can hold a run;
/// a document replaced by a rename is whole whatever happens, and one that cannot be read is
/// started afresh (it is a politeness budget, not data: the worst is one probe more).
struct HostBudgetStore: Sendable {
    let folder: URL

    /// The folder the environment names.
    static func folder(environment: [String: String]) -> URL {
        if let given = environment["COURIER_HOSTS_DIR"], !given.isEmpty {
            return URL(fileURLWithPath: given)
        }
        let state =
            environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? NSHomeDirectory()) as NSString).appendingPathComponent(
                ".local/state")
        return URL(fileURLWithPath: state).appendingPathComponent("courier/hosts")
    }

    /// The budget of `origin`, changed by `body` under the origin's lock; `body`'s result.
    func update<Result>(_ origin: Origin, _ body: (inout HostBudget) -> Result)
        throws(FileError) -> Result
    {
        let name = String(SHA256.hex(of: Array(origin.description.utf8)).prefix(24))
        let lock = try FileLockGuard(folder.appendingPathComponent("\(name).lock"))
        let file = folder.appendingPathComponent("\(name).json")
        var budget = Self.load(file)
        let result = body(&budget)
        let temporary = folder.appendingPathComponent(".\(name).\(getpid()).tmp")
        let bytes = Self.bytes(budget, origin: origin)
        do {
            try Data(bytes).write(to: temporary)
        } catch {
            throw FileError(path: temporary.path, action: "write", code: EIO)
        }
        if rename(temporary.path, file.path) != 0 {
            let code = errno
            unlink(temporary.path)
            throw FileError(path: file.path, action: "replace", code: code)
        }
        withExtendedLifetime(lock) {}
        return result
    }

    /// The budget in `file`; a fresh one when there is none or it cannot be read.
    static func load(_ file: URL) -> HostBudget {
        guard case .success(let members)? = StateDocument.read(file, kind: "host budget") else {
            return HostBudget()
        }
        func number(_ key: String, in members: StateDocument.Members) -> Double? {
            guard case .number(let value)? = members.first(where: { $0.key == key })?.node.value
            else { return nil }
            return value
        }
        var budget = HostBudget()
        budget.pausedUntil = number("pausedUntil", in: members)
        budget.probeUntil = number("probeUntil", in: members)
        budget.openUntil = number("openUntil", in: members)
        budget.nextSlot = number("nextSlot", in: members)
        if case .object(let quota)? = members.first(where: { $0.key == "quota" })?.node.value {
            let fields = quota.map { ($0.key, $0.node) }
            if let remaining = number("remaining", in: fields),
                let resetAt = number("resetAt", in: fields)
            {
                budget.quota = HostBudget.Quota(
                    remaining: Int(remaining), resetAt: resetAt,
                    limit: number("limit", in: fields).map { Int($0) })
            }
        }
        return budget
    }

    /// The document of `budget`.
    static func bytes(_ budget: HostBudget, origin: Origin) -> [UInt8] {
        var members: [(String, JSONWriter.Value)] = [("origin", .string(origin.description))]
        let times: [(String, Double?)] = [
            ("pausedUntil", budget.pausedUntil), ("probeUntil", budget.probeUntil),
            ("openUntil", budget.openUntil), ("nextSlot", budget.nextSlot),
        ]
        for (key, value) in times { if let value { members.append((key, .double(value))) } }
        if let quota = budget.quota {
            var fields: [(String, JSONWriter.Value)] = [
                ("remaining", .int(quota.remaining)), ("resetAt", .double(quota.resetAt)),
            ]
            if let limit = quota.limit { fields.append(("limit", .int(limit))) }
            members.append(("quota", .object(fields)))
        }
        return StateDocument.bytes(members)
    }
}
