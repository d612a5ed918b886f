import Foundation

/// The fixture server's `/bytes` body: byte i is `i % 256`.
///
/// Compared with `==` (one `memcmp`) rather than byte by byte in a closure: a per-byte check
/// of megabytes costs seconds under the thread sanitizer, on the cooperative pool's two
/// threads, and starves every clock-bound test running alongside.
public enum BytePattern {
    /// The first `count` bytes of the pattern, built from whole 256-byte blocks.
    public static func data(count: Int) -> Data {
        let block = Data((0...255).map { UInt8($0) })
        var data = Data(capacity: count + 256)
        while data.count < count { data.append(block) }
        return data.prefix(count)
    }

    /// Whether `data` is exactly the pattern's first `data.count` bytes.
    public static func matches(_ data: Data) -> Bool {
        data == Self.data(count: data.count)
    }
}
