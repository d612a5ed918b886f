import Foundation

/// MD5 (RFC 1321), for HTTP Digest authentication's `MD5` algorithm only: servers still offer
/// it, and it is nobody's idea of a secure hash.
package enum MD5 {
    /// The digest of `bytes` as 32 lowercase hex digits.
    package static func hex<Bytes: Sequence<UInt8>>(of bytes: Bytes) -> String {
        digest(Array(bytes)).map { String(format: "%02x", $0) }.joined()
    }

    package static func digest(_ message: [UInt8]) -> [UInt8] {
        var padded = message
        padded.append(0x80)
        while padded.count % 64 != 56 { padded.append(0) }
        let bits = UInt64(message.count) &* 8
        for shift in stride(from: 0, to: 64, by: 8) {
            padded.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift)))
        }
        var state: (UInt32, UInt32, UInt32, UInt32) = (
            0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476
        )
        var words = [UInt32](repeating: 0, count: 16)
        for chunk in stride(from: 0, to: padded.count, by: 64) {
            for index in 0..<16 {
                let at = chunk + index * 4
                words[index] =
                    UInt32(padded[at]) | UInt32(padded[at + 1]) << 8 | UInt32(padded[at + 2]) << 16
                    | UInt32(padded[at + 3]) << 24
            }
            var (a, b, c, d) = state
            for round in 0..<64 {
                let mixed: UInt32
                let word: Int
                switch round {
                case 0..<16:
                    mixed = (b & c) | (~b & d)
                    word = round
                case 16..<32:
                    mixed = (d & b) | (~d & c)
                    word = (5 * round + 1) % 16
                case 32..<48:
                    mixed = b ^ c ^ d
                    word = (3 * round + 5) % 16
                default:
                    mixed = c ^ (b | ~d)
                    word = (7 * round) % 16
                }
                let sum = mixed &+ a &+ constants[round] &+ words[word]
                a = d
                d = c
                c = b
                b = b &+ rotate(sum, shifts[round])
            }
            state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d)
        }
        var output: [UInt8] = []
        for value in [state.0, state.1, state.2, state.3] {
            for shift in stride(from: 0, to: 32, by: 8) {
                output.append(UInt8(truncatingIfNeeded: value >> UInt32(shift)))
            }
        }
        return output
    }

    /// Each round's rotation: four per quarter, repeated four times.
    private static let shifts: [UInt32] = {
        let quarters: [[UInt32]] = [
            [7, 12, 17, 22], [5, 9, 14, 20], [4, 11, 16, 23], [6, 10, 15, 21],
        ]
        var table: [UInt32] = []
        for quarter in quarters {
            for _ in 0..<4 { table.append(contentsOf: quarter) }
        }
        return table
    }()

    /// floor(|sin(i + 1)| × 2^32), as RFC 1321 defines the table.
    private static let constants: [UInt32] = (0..<64).map {
        UInt32(floor(abs(sin(Double($0 + 1))) * 4_294_967_296))
    }

    private static func rotate(_ value: UInt32, _ count: UInt32) -> UInt32 {
        (value << count) | (value >> (32 - count))
    }
}
