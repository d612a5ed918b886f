import Foundation
import Testing

@testable import Courier

/// The reader both transports send a streamed body through: parts in order through any buffer
/// size, a rewind, and a file that changes size after it was measured.
@Suite("StreamedBodyReader")
struct StreamedBodyReaderTests {
    static let url = URL(string: "http://127.0.0.1/upload")!

    static func file(_ text: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-reader-\(UUID().uuidString)")
        try Data(text.utf8).write(to: url)
        return url
    }

    /// Everything the reader gives, `size` bytes at a time.
    static func drain(_ reader: StreamedBodyReader, size: Int) -> String? {
        var out = Data()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 1)
        defer { buffer.deallocate() }
        for _ in 0..<10_000 {
            guard let count = reader.read(into: buffer) else { return nil }
            if count == 0 { return String(decoding: out, as: UTF8.self) }
            out.append(contentsOf: buffer[..<count])
        }
        return nil
    }

    @Test("parts come out in order whatever the buffer size", arguments: [1, 2, 3, 7, 64, 4096])
    func order(size: Int) throws {
        let first = try Self.file("file-one|")
        let empty = try Self.file("")
        let second = try Self.file("file-two")
        defer {
            for url in [first, empty, second] { try? FileManager.default.removeItem(at: url) }
        }
        let body = StreamedBody(parts: [
            .data(Data("head|".utf8)), .file(first), .file(empty), .data(Data()), .file(second),
            .data(Data("|tail".utf8)),
        ])
        let reader = try StreamedBodyReader(body, url: Self.url)
        #expect(reader.length == 27)
        #expect(Self.drain(reader, size: size) == "head|file-one|file-two|tail")
        #expect(reader.sent == 27)
        reader.rewind()
        #expect(Self.drain(reader, size: size) == "head|file-one|file-two|tail", "after a rewind")
    }

    @Test func aFileThatGrewOrShrankFailsInsteadOfLying() throws {
        for (before, after, word) in [("12345", "1234567", "grew"), ("12345", "12", "shrank")] {
            let url = try Self.file(before)
            defer { try? FileManager.default.removeItem(at: url) }
            let reader = try StreamedBodyReader(.file(url), url: Self.url)
            try Data(after.utf8).write(to: url)
            #expect(Self.drain(reader, size: 3) == nil)
            let error = try #require(reader.error(url: Self.url))
            #expect(error.kind == .file)
            #expect(error.message.contains(word), "\(error.message)")
        }
    }

    @Test func aMissingFileOrAFolderIsRefusedUpFront() throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent(
            "nope-\(UUID())")
        #expect(throws: HTTPError.self) { try StreamedBodyReader(.file(missing), url: Self.url) }
        #expect {
            try StreamedBodyReader(.file(FileManager.default.temporaryDirectory), url: Self.url)
        } throws: { ($0 as? HTTPError)?.message.contains("not a regular file") == true }
    }

    @Test func multipartEscapesQuotesAndLineBreaksInNames() {
        var form = MultipartFormData(boundary: "b")
        form.append(field: "a\"b\r\nX-Evil: 1", "v")
        let bytes = form.body.parts.compactMap { part -> Data? in
            if case .data(let data) = part { return data }
            return nil
        }.reduce(Data(), +)
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == "--b\r\nContent-Disposition: form-data; name=\"a%22b%0D%0AX-Evil: 1\"\r\n\r\nv\r\n--b--\r\n"
        )
        #expect(form.body.parts.count == 1, "adjacent bytes are joined")
    }
}
