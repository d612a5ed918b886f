import Courier
import Foundation
import Testing

/// The event stream rules of WHATWG HTML 9.2 ("Server-sent events"), restated as cases, and
/// the parser's independence from how the bytes are cut.
@Suite struct ServerSentEventParserTests {
    /// Parses `text` fed in one piece, then ends the stream.
    static func events(_ text: String, maxLineLength: Int = 1 << 20) throws -> [ServerSentEvent] {
        try events(Array(text.utf8), cutAt: [], maxLineLength: maxLineLength)
    }

    /// Parses `bytes` cut at the given offsets.
    static func events(_ bytes: [UInt8], cutAt offsets: [Int], maxLineLength: Int = 1 << 20)
        throws -> [ServerSentEvent]
    {
        var parser = ServerSentEventParser(maxLineLength: maxLineLength)
        var events: [ServerSentEvent] = []
        var start = 0
        for end in offsets + [bytes.count] {
            events += try parser.feed(bytes[start..<end])
            start = end
        }
        parser.finish()
        return events
    }

    @Test func aCommentAnIdAndAnEmptyIdThatClearsIt() throws {
        // After the spec's first example: an `id` line without a value resets the last id.
        let events = try Self.events(
            ": a comment\n\ndata: one\nid: 7\n\ndata:two\nid\n\ndata:  three\n\n")
        #expect(
            events == [
                ServerSentEvent(data: "one", id: "7"),
                ServerSentEvent(data: "two", id: nil),
                ServerSentEvent(data: " three", id: nil),  // only one space is stripped
            ])
    }

    @Test func dataLinesWithoutValuesAndAnUnfinishedLastEvent() throws {
        // After the spec's second example: "data" alone adds an empty line; an event the
        // stream does not close with a blank line is never dispatched.
        let events = try Self.events("data\n\ndata\ndata\n\ndata:")
        #expect(events.map(\.data) == ["", "\n"])
    }

    @Test func aSpaceAfterTheColonIsOptional() throws {
        // After the spec's third example: the two events are the same.
        let events = try Self.events("data:same\n\ndata: same\n\n")
        #expect(events.map(\.data) == ["same", "same"])
    }

    @Test func severalDataLinesAreJoinedWithLineFeeds() throws {
        // After the spec's stock-ticker example.
        let events = try Self.events("data: ACME\ndata: +2\ndata: 10\n\n")
        #expect(events == [ServerSentEvent(data: "ACME\n+2\n10")])
    }

    @Test func eventTypesDefaultToMessage() throws {
        let events = try Self.events(
            "event: add\ndata: 1\n\nevent:\ndata: 2\n\ndata: 3\n\nevent: remove\ndata: 4\n\n")
        #expect(events.map(\.event) == ["add", "message", "message", "remove"])
    }

    @Test func anIdStaysInForceForTheEventsAfterIt() throws {
        let events = try Self.events("id: a\ndata: 1\n\ndata: 2\n\nid: b\n\ndata: 3\n\n")
        #expect(events.map(\.id) == ["a", "a", "b"])
    }

    @Test func anIdWithNulIsIgnored() throws {
        var parser = ServerSentEventParser()
        let events = try parser.feed(Array("id: 1\ndata: x\n\nid: 2\u{0}3\ndata: y\n\n".utf8))
        #expect(events.map(\.id) == ["1", "1"])
        #expect(parser.lastEventID == "1")
    }

    @Test func retryTakesOnlyDigits() throws {
        var parser = ServerSentEventParser()
        let events = try parser.feed(
            Array(
                "retry: 1500\ndata: a\n\nretry: 2s\ndata: b\n\nretry: -1\n\nretry\n\nretry: 99999999999999999999999\n\n"
                    .utf8))
        #expect(events.map(\.retry) == [1500, nil])
        #expect(parser.retry == 1500)
        _ = try parser.feed(Array("retry: 20\n\n".utf8))
        #expect(parser.retry == 20, "a retry without data still sets the time")
    }

    @Test func commentsUnknownFieldsAndFieldsWithoutColons() throws {
        let events = try Self.events(":keepalive\nfoo: bar\nDATA: no\ndata\nevent\n\n")
        #expect(events == [ServerSentEvent(event: "message", data: "")])
    }

    @Test func eventsWithoutDataAreNotDispatched() throws {
        let events = try Self.events("event: ping\nid: 3\n\n\n\n")
        #expect(events.isEmpty)
    }

    @Test func crLfAndCrLfEndLinesAlike() throws {
        let expected = [ServerSentEvent(event: "e", data: "a\nb")]
        #expect(try Self.events("event: e\ndata: a\ndata: b\n\n") == expected)
        #expect(try Self.events("event: e\rdata: a\rdata: b\r\r") == expected)
        #expect(try Self.events("event: e\r\ndata: a\r\ndata: b\r\n\r\n") == expected)
        #expect(try Self.events("event: e\r\ndata: a\rdata: b\n\r\n") == expected)
    }

    @Test func aByteOrderMarkAtTheStartIsDropped() throws {
        #expect(try Self.events("\u{FEFF}data: x\n\n") == [ServerSentEvent(data: "x")])
        // Only at the start: later, it is part of the field name, which is then unknown.
        #expect(try Self.events("data: x\n\n\u{FEFF}data: y\n\n") == [ServerSentEvent(data: "x")])
    }

    @Test func invalidUTF8IsReplaced() throws {
        let bytes = Array("data: a".utf8) + [0xFF] + Array("b\n\n".utf8)
        #expect(try Self.events(bytes, cutAt: []).map(\.data) == ["a\u{FFFD}b"])
    }

    @Test func aLineOverTheLimitThrowsBeforeItHasAllArrived() throws {
        var parser = ServerSentEventParser(maxLineLength: 16)
        _ = try parser.feed(Array("data: 0123456789\n\n".utf8))  // 16 bytes: allowed
        #expect {
            _ = try parser.feed(Array("data: 0123".utf8))
            _ = try parser.feed(Array("45678901".utf8))
        } throws: { error in
            let error = error as? StreamError
            return error?.kind == .lineTooLong && error?.line == 3
        }
    }

    @Test func anEventsDataIsBoundedByTheSameLimit() throws {
        var parser = ServerSentEventParser(maxLineLength: 16)
        #expect {
            _ = try parser.feed(Array(String(repeating: "data: 12345\n", count: 4).utf8))
        } throws: { ($0 as? StreamError)?.kind == .lineTooLong }
    }

    @Test func decodeReadsTheDataAsJSON() throws {
        struct Token: Decodable, Equatable { let text: String }
        let event = ServerSentEvent(event: "token", data: #"{"text": "hi"}"#, id: "4")
        #expect(try event.decode(Token.self) == Token(text: "hi"))
        #expect {
            _ = try ServerSentEvent(data: #"{"txt": "hi"}"#).decode(Token.self)
        } throws: { error in
            let error = error as? StreamError
            return error?.kind == .decoding && error?.message.contains("\"text\"") == true
        }
    }

    /// A stream with every awkward thing: a byte order mark, each line ending, a character of
    /// two, three and four bytes, a comment, an id, a retry, and an unfinished last event.
    static let sample: [UInt8] = Array(
        ("\u{FEFF}: hi\r\nretry: 250\r\nid: é1\nevent: ünï\r\ndata: 𝄞 one\rdata:two €\r\n\r\n"
            + "data: three\r\rdata:\n\nid: 9\ndata: unfinished\n").utf8)
    static let sampleEvents = [
        ServerSentEvent(event: "ünï", data: "𝄞 one\ntwo €", id: "é1", retry: 250),
        ServerSentEvent(data: "three", id: "é1"),
        ServerSentEvent(data: "", id: "é1"),
    ]

    @Test func everyCutIntoTwoGivesTheSameEvents() throws {
        #expect(try Self.events(Self.sample, cutAt: []) == Self.sampleEvents)
        for offset in 0...Self.sample.count {
            #expect(
                try Self.events(Self.sample, cutAt: [offset]) == Self.sampleEvents,
                "cut at \(offset)")
        }
    }

    @Test func everyCutIntoThreeAndByteByByteGiveTheSameEvents() throws {
        let count = Self.sample.count
        for first in 0...count {
            for second in first...count {
                let events = try Self.events(Self.sample, cutAt: [first, second])
                guard events == Self.sampleEvents else {
                    Issue.record("cut at \(first) and \(second): \(events)")
                    return
                }
            }
        }
        #expect(try Self.events(Self.sample, cutAt: Array(0...count)) == Self.sampleEvents)
    }

    @Test func aReconnectedParserKeepsTheLastIdAndRetry() throws {
        var parser = ServerSentEventParser(lastEventID: "41", retry: 100)
        let events = try parser.feed(Array("data: x\n\n".utf8))
        #expect(events == [ServerSentEvent(data: "x", id: "41")])
        #expect(parser.retry == 100)
    }
}
