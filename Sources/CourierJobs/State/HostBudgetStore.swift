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

    /// The document of `origin`'s budget: named by a hash of the origin, which it holds.
    func file(for origin: Origin) -> URL {
        folder.appendingPathComponent("\(Self.name(of: origin)).json")
    }

    private static func name(of origin: Origin) -> String {
        String(SHA256.hex(of: Array(origin.description.utf8)).prefix(24))
    }

    /// The budget of `origin`, changed by `body` under the origin's lock; `body`'s result. The
    /// document is written only when the budget changed (a host left open costs a lock and a
    /// read per request, no write), and not `fsync`ed: after a power cut the budget starts
    /// afresh, which costs one probe.
    func update<Result>(_ origin: Origin, _ body: (inout HostBudget) -> Result)
        throws(FileError) -> Result
    {
        let name = Self.name(of: origin)
        let lock = try FileLockGuard(folder.appendingPathComponent("\(name).lock"))
        let file = folder.appendingPathComponent("\(name).json")
        let before = Self.load(file)
        var budget = before
        let result = body(&budget)
        if budget != before {
            try Self.replace(file, with: Self.bytes(budget, origin: origin), name: name)
        }
        withExtendedLifetime(lock) {}
        return result
    }

    /// Writes `bytes` to a temporary beside `file` and renames it over `file`.
    private static func replace(_ file: URL, with bytes: [UInt8], name: String) throws(FileError) {
        let temporary = file.deletingLastPathComponent().appendingPathComponent(
            ".\(name).\(getpid()).tmp")
        let descriptor = open(
            temporary.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard descriptor >= 0 else {
            throw FileError(path: temporary.path, action: "create", code: errno)
        }
        let failed = bytes.withUnsafeBytes { POSIX.writeAll(descriptor, $0) }
        close(descriptor)
        if let failed {
            unlink(temporary.path)
            throw FileError(path: temporary.path, action: "write", code: failed)
        }
        if rename(temporary.path, file.path) != 0 {
            let code = errno
            unlink(temporary.path)
            throw FileError(path: file.path, action: "replace", code: code)
        }
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
        budget.windowEnd = number("windowEnd", in: members)
        budget.slowedAt = number("slowedAt", in: members)
        if case .string(let text)? = members.first(where: { $0.key == "probeTicket" })?.node.value {
            budget.probeTicket = UInt64(text)
        }
        if case .object(let flights)? = members.first(where: { $0.key == "inFlight" })?.node.value {
            for flight in flights {
                if let ticket = UInt64(flight.key), case .number(let until) = flight.node.value {
                    budget.inFlight[ticket] = until
                }
            }
        }
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
            ("windowEnd", budget.windowEnd), ("slowedAt", budget.slowedAt),
        ]
        for (key, value) in times { if let value { members.append((key, .double(value))) } }
        // As text: a ticket is a 64-bit number, more than a JSON number keeps exactly.
        if let ticket = budget.probeTicket {
            members.append(("probeTicket", .string(String(ticket))))
        }
        if let quota = budget.quota {
            var fields: [(String, JSONWriter.Value)] = [
                ("remaining", .int(quota.remaining)), ("resetAt", .double(quota.resetAt)),
            ]
            if let limit = quota.limit { fields.append(("limit", .int(limit))) }
            members.append(("quota", .object(fields)))
        }
        if !budget.inFlight.isEmpty {
            let flights = budget.inFlight.sorted { $0.key < $1.key }
            members.append(
                ("inFlight", .object(flights.map { (String($0.key), .double($0.value)) })))
        }
        return StateDocument.bytes(members)
    }
}
