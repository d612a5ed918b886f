/// Turns the bytes of a `text/event-stream` into events, chunk by chunk, by the WHATWG HTML
/// rules ("Server-sent events", event stream interpretation).
///
/// Pure and synchronous: feed it chunks as they come, in any cutting, and it returns the events
/// each one completes.
/// ```swift
/// var parser = ServerSentEventParser()
/// for try await chunk in response.body {
///     for event in try parser.feed(chunk) { handle(event) }
/// }
/// ```
/// - Lines end with CRLF, LF or CR; a UTF-8 byte order mark at the start is dropped; the text
///   is decoded as UTF-8 with invalid bytes replaced.
/// - `data` lines are joined with LF; an event is dispatched only at a blank line, and not at
///   all when it has no data. An event the stream leaves unfinished is dropped.
/// - `id` sets ``lastEventID`` (unless it contains NUL); `retry` sets ``retry`` when its value
///   is all ASCII digits; lines starting with `:` are comments; unknown fields are ignored.
/// - A line, or an event's data, longer than `maxLineLength` bytes throws ``StreamError``
///   with `.lineTooLong`, so a server cannot fill memory.
public struct ServerSentEventParser: Sendable {
    private var splitter: LineSplitter
    private var data: [UInt8] = []
    private var hasData = false
    private var eventType: String?
    private var eventRetry: Int?
    /// The last event id the stream set: sent as `Last-Event-ID` on a reconnection.
    public private(set) var lastEventID: String
    /// The reconnection time in milliseconds the stream last asked for.
    public private(set) var retry: Int?

    /// - Parameters:
    ///   - maxLineLength: the longest line, and the most data one event may gather, in bytes.
    ///   - lastEventID: the id a previous connection left (kept across reconnections).
    public init(maxLineLength: Int = 1 << 20, lastEventID: String = "", retry: Int? = nil) {
        self.splitter = LineSplitter(maxLineLength: maxLineLength)
        self.lastEventID = lastEventID
        self.retry = retry
    }

    /// Reads a chunk and returns the events it completes.
    public mutating func feed(_ chunk: some Collection<UInt8>) throws -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        // The splitter is moved out while it calls back into `self` (exclusive access).
        var splitter = self.splitter
        self.splitter = LineSplitter(maxLineLength: splitter.maxLineLength)
        defer { self.splitter = splitter }
        try splitter.feed(chunk) { line, number in
            if let event = try process(line, number: number) { events.append(event) }
        }
        return events
    }

    /// Ends the stream. An event without its closing blank line is dropped, and so is an
    /// unended last line, as the spec says; ``lastEventID`` and ``retry`` stay.
    public mutating func finish() {
        _ = splitter.finish()
        data = []
        hasData = false
        eventType = nil
        eventRetry = nil
    }

    private mutating func process(_ line: ArraySlice<UInt8>, number: Int) throws -> ServerSentEvent?
    {
        if line.isEmpty { return dispatch() }
        if line.first == UInt8(ascii: ":") { return nil }
        let field: ArraySlice<UInt8>
        var value: ArraySlice<UInt8>
        if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
            field = line[..<colon]
            value = line[(colon + 1)...]
            if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
        } else {
            field = line
            value = []
        }
        switch String(decoding: field, as: UTF8.self) {
        case "event":
            eventType = String(decoding: value, as: UTF8.self)
        case "data":
            guard data.count + value.count + 1 <= splitter.maxLineLength else {
                throw StreamError(
                    .lineTooLong,
                    "an event's data passed the limit of \(splitter.maxLineLength) bytes "
                        + "(maxLineLength)",
                    line: number)
            }
            data.append(contentsOf: value)
            data.append(UInt8(ascii: "\n"))
            hasData = true
        case "id":
            if !value.contains(0) { lastEventID = String(decoding: value, as: UTF8.self) }
        case "retry":
            // All digits, or ignored; a value too large for an Int is ignored too.
            if !value.isEmpty, value.allSatisfy({ (0x30...0x39).contains($0) }),
                let milliseconds = Int(String(decoding: value, as: UTF8.self))
            {
                retry = milliseconds
                eventRetry = milliseconds
            }
        default:
            break
        }
        return nil
    }

    private mutating func dispatch() -> ServerSentEvent? {
        defer {
            data.removeAll(keepingCapacity: true)
            hasData = false
            eventType = nil
            eventRetry = nil
        }
        guard hasData else { return nil }
        let text = String(decoding: data.dropLast(), as: UTF8.self)
        let type = eventType.flatMap { $0.isEmpty ? nil : $0 } ?? "message"
        return ServerSentEvent(
            event: type, data: text, id: lastEventID.isEmpty ? nil : lastEventID,
            retry: eventRetry)
    }
}
