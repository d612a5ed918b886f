/// FNV-1a, 64 bits: a stable hash of bytes, the same on every platform and version (unlike
/// Swift's `Hasher`, which is seeded per process). Used for compact task keys.
enum FNV1a {
    static func hash<Bytes: Sequence<UInt8>>(
        _ bytes: Bytes, into start: UInt64 = 0xcbf2_9ce4_8422_2325
    )
        -> UInt64
    {
        var value = start
        for byte in bytes {
            value ^= UInt64(byte)
            value = value &* 0x0000_0100_0000_01B3
        }
        return value
    }

    /// The key of a task in a job: its job name and task id, separated by a NUL.
    static func taskKey(job: String, task: String) -> UInt64 {
        hash(task.utf8, into: hash([0], into: hash(job.utf8)))
    }
}
