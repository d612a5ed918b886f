/// The bound on a response's header block, the same on both transports.
///
/// A header block is read whole before a response exists, so a server can make a client parse
/// as much of one as it likes: libcurl alone stops at 300 KiB (7.88), and FoundationNetworking
/// spent 15 s on 40,000 folded lines (160 KiB) on the session's one work queue, holding up every
/// other request of the client. 64 KiB is 4 times Node's default and under AsyncHTTPClient's
/// 80 KiB; the largest blocks seen from real APIs are a few KiB.
///
/// A response over it fails as ``HTTPError/Kind/badResponse``. curl counts the raw bytes of
/// every header line of the transfer (status lines and CRLFs included) as they arrive, and stops
/// at the line that passes the bound. URLSession sees the block only once FoundationNetworking
/// has parsed it, with folded lines and repeated fields joined, so it counts the fields it is
/// given as the lines they were (``estimatedBytes(of:)``) and may let through a block near the
/// bound that curl refuses (docs/transports.md).
package enum ResponseHeaderLimit {
    /// The most bytes a response's header block may have.
    package static let maxBytes = 64 << 10

    /// Why a header block of at least `bytes` bytes is refused.
    package static func message(bytes: Int) -> String {
        "the response's header block is larger than \(maxBytes >> 10) KiB (\(bytes) bytes or more): refused"
    }

    /// The wire size of parsed fields, as lines `name: value` ended by CRLF, a value joined
    /// from repeated fields (", ") counted as one line per part, plus a status line.
    package static func estimatedBytes(of fields: some Sequence<(name: String, value: String)>)
        -> Int
    {
        var total = "HTTP/1.1 200 OK\r\n".utf8.count
        for (name, value) in fields {
            var lines = 1
            var previous: UInt8 = 0
            for byte in value.utf8 {
                if previous == 0x2C, byte == 0x20 { lines += 1 }
                previous = byte
            }
            total += lines * (name.utf8.count + 4) + value.utf8.count
        }
        return total
    }
}
