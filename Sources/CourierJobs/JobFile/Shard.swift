/// One of `count` parts of a job (`courier run --shard index/count`): the tasks whose id
/// hashes to `index`.
///
/// The hash is stable and documented, the same on every platform and version: FNV-1a 64 of
/// the task id's UTF-8 bytes, through MurmurHash3's 64-bit finalizer (FNV-1a alone keeps the
/// low bits of similar ids alike, so `user-1` … `user-9` would bunch up), modulo `count`.
/// Numbering starts at 0, as Kubernetes numbers completion indexes.
struct Shard: Sendable, Hashable, CustomStringConvertible {
    let index: Int
    let count: Int

    /// The most shards a job may be split into.
    static let maximumCount = 100_000

    /// `nil` unless 0 ≤ `index` < `count` ≤ ``maximumCount``.
    init?(index: Int, count: Int) {
        guard count >= 1, count <= Self.maximumCount, index >= 0, index < count else {
            return nil
        }
        self.index = index
        self.count = count
    }

    /// `I/N`, as on the command line.
    init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]) else {
            return nil
        }
        self.init(index: index, count: count)
    }

    var description: String { "\(index)/\(count)" }

    /// The shard a task id belongs to, out of `count`.
    static func of(taskID: String, count: Int) -> Int {
        Int(mix(FNV1a.hash(taskID.utf8)) % UInt64(count))
    }

    /// Whether this shard runs the task with this id.
    func owns(taskID: String) -> Bool {
        count == 1 || Self.of(taskID: taskID, count: count) == index
    }

    /// Whether this shard runs a task: its own tasks, and every task that captures (each shard
    /// needs the values to fan out its own share of the children).
    func runs(taskID: String, capturing: Bool) -> Bool {
        capturing || owns(taskID: taskID)
    }

    /// Whether this shard settles a skip of a task of `spec` under `id`: its own, one that
    /// captures (every shard runs it: a listing whose token input failed hands its kept ids
    /// on), and a fan-out's skip under its template (its children's ids are unknown, so each
    /// shard's are among them). The run and its plan decide it alike.
    func settlesSkip(of id: String, spec: TaskSpec) -> Bool {
        let template = id == spec.id && !Template(spec.id).variables.isEmpty
        return template || runs(taskID: id, capturing: spec.hasCaptures)
    }

    /// What log file names and locks carry: `shard-2-of-4`.
    var fileTag: String { "shard-\(index)-of-\(count)" }

    /// MurmurHash3's fmix64: every input bit reaches every output bit.
    static func mix(_ value: UInt64) -> UInt64 {
        var mixed = value
        mixed ^= mixed >> 33
        mixed = mixed &* 0xff51_afd7_ed55_8ccd
        mixed ^= mixed >> 33
        mixed = mixed &* 0xc4ce_b9fe_1a85_ec53
        mixed ^= mixed >> 33
        return mixed
    }
}
