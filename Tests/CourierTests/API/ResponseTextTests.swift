import Foundation
import Testing

@testable import Courier

@Suite struct ResponseTextTests {
    func text(_ bytes: [UInt8], _ contentType: String?) -> String {
        ResponseText.decode(Data(bytes), contentType: contentType)
    }

    @Test func utf8IsTheDefault() {
        let cafe = Array("café".utf8)
        #expect(text(cafe, nil) == "café")
        #expect(text(cafe, "text/plain") == "café")
        #expect(text(cafe, "text/plain; charset=UTF-8") == "café")
        #expect(text(cafe, #"text/plain; charset="utf-8""#) == "café")
    }

    @Test func latin1ByItsCharset() {
        #expect(text([0x63, 0x61, 0x66, 0xE9], "text/plain; charset=iso-8859-1") == "café")
        #expect(text([0x63, 0x61, 0x66, 0xE9], "text/plain;charset=ISO-8859-1") == "café")
    }

    @Test func windows1252HasItsOwnHighRow() {
        // 0x80 is the euro sign and 0x93/0x94 curly quotes in windows-1252, not C1 controls.
        let quoted = text([0x80, 0x20, 0x93, 0x61, 0x94], "text/plain; charset=windows-1252")
        #expect(quoted == "€ “a”")
        // As the WHATWG Encoding Standard (and every browser) does, Latin-1 labels read so too.
        #expect(text([0x80], "text/plain; charset=iso-8859-1") == "€")
    }

    @Test func usASCIIKeepsASCIIAndShowsStrayBytes() {
        #expect(text(Array("plain".utf8), "text/plain; charset=us-ascii") == "plain")
        #expect(text([0x61, 0xE9], "text/plain; charset=us-ascii") == "aé")
    }

    @Test func utf16ByByteOrderMarkOrLabel() {
        #expect(text([0xFE, 0xFF, 0x00, 0x63, 0x00, 0xE9], "text/plain; charset=utf-16") == "cé")
        #expect(text([0xFF, 0xFE, 0x63, 0x00, 0xE9, 0x00], "text/plain; charset=utf-16") == "cé")
        #expect(text([0x63, 0x00, 0xE9, 0x00], "text/plain; charset=utf-16") == "cé")
        #expect(text([0x00, 0x63, 0x00, 0xE9], "text/plain; charset=utf-16be") == "cé")
        #expect(text([0x63, 0x00, 0xE9, 0x00], "text/plain; charset=utf-16le") == "cé")
        #expect(text([0x63, 0x00, 0xE9], "text/plain; charset=utf-16le") == "c\u{FFFD}")
    }

    @Test func foundationCharsets() {
        // "Мир" in windows-1251.
        #expect(text([0xCC, 0xE8, 0xF0], "text/plain; charset=windows-1251") == "Мир")
    }

    @Test func unknownCharsetFallsBackToUTF8WithReplacement() {
        #expect(text(Array("café".utf8), "text/plain; charset=x-klingon") == "café")
        #expect(text([0x61, 0xFF], "text/plain; charset=x-klingon") == "a\u{FFFD}")
    }

    @Test func stringResponsesUseTheCharset() async throws {
        let response = HTTPResponse(
            status: 200, headers: ["Content-Type": "text/plain; charset=iso-8859-1"],
            body: Data([0x63, 0x61, 0x66, 0xE9]), url: URL(string: "https://api.test/")!)
        #expect(try Request<String>.get("/").decode(response, using: JSONDecoder()) == "café")
        #expect(RawResponse.decode(response, as: String.self) == "café")
        #expect(RawResponse.decode(response, as: Data.self) == Data([0x63, 0x61, 0x66, 0xE9]))
    }
}
