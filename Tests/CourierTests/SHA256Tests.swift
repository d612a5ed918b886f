import Foundation
import Testing

import Courier
import CourierTestSupport

/// NIST FIPS 180-2 examples and the padding boundaries around one 64-byte block.
@Suite("SHA256")
struct SHA256Tests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
        (
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
        ),
    ])
    func nistVectors(message: String, digest: String) {
        #expect(SHA256.hex(of: Array(message.utf8)) == digest)
    }

    @Test func oneMillionAs() {
        #expect(
            SHA256.hex(of: [UInt8](repeating: 0x61, count: 1_000_000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func blockBoundaries() async throws {
        // Lengths around where the padding spills into a second block, checked against
        // sha256sum(1) on the same bytes.
        for length in [55, 56, 63, 64, 65, 119, 120] {
            let bytes = (0..<length).map { UInt8($0 % 251) }
            let file = FileManager.default.temporaryDirectory.appendingPathComponent(
                "sha-\(UUID().uuidString)")
            try Data(bytes).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let (_, output) = try await ChildProcess.output("/usr/bin/sha256sum", [file.path])
            let text = String(decoding: output, as: UTF8.self)
            #expect(SHA256.hex(of: bytes) == String(text.prefix(64)), "length \(length)")
        }
    }
}
