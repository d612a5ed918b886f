import Foundation

/// The events of a `text/event-stream` as an `AsyncSequence`, read as they arrive
/// (``HTTPClient/events(_:reconnect:maxLineLength:)``,
/// ``DefaultAPIClient/events(for:reconnect:maxLineLength:)``,
/// ``HTTPStreamedResponse/events(maxLineLength:)``).
///
/// The request is sent when the loop asks for the first event. Leaving the loop, or cancelling
/// its task, cancels the transfer and any wait for a reconnection. Iterate it once.
public struct ServerSentEvents: AsyncSequence, Sendable {
    public typealias Element = ServerSentEvent

    /// Whether, and how often, a stream that ends or fails is opened again.
    ///
    /// A reconnection waits the time the stream's last `retry` field asked for (or `delay`)
    /// and sends the request again with `Last-Event-ID`, so the server can go on after the
    /// last event it sent. It follows a clean end of the body and a network failure
    /// (``HTTPError`` `.network`, `.timeout`, `.connect`, `.dns`, `.badResponse`); a status
    /// that is not 2xx, a wrong content type, a line over the limit and cancellation end the
    /// sequence, and a 204 ends it normally (the server's way of saying "no more").
    public struct Reconnection: Sendable, Hashable {
        /// Reconnections allowed in a row with no event between them; a stream that delivers
        /// events may reconnect for ever.
        public var maxAttempts: Int
        /// The wait before reconnecting when the stream sent no `retry`.
        public var delay: Duration

        public init(maxAttempts: Int, delay: Duration = .seconds(3)) {
            self.maxAttempts = Swift.max(0, maxAttempts)
            self.delay = delay
        }

        /// No reconnection: the sequence ends with the body (the default).
        public static let never = Reconnection(maxAttempts: 0)

        /// Reconnects up to `attempts` times in a row.
        public static func upTo(_ attempts: Int, delay: Duration = .seconds(3)) -> Reconnection {
            Reconnection(maxAttempts: attempts, delay: delay)
        }
    }

    let source: StreamSource
    let reconnect: Reconnection
    let maxLineLength: Int

    init(source: StreamSource, reconnect: Reconnection, maxLineLength: Int) {
        self.source = source
        self.reconnect = reconnect
        self.maxLineLength = maxLineLength
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(sequence: self)
    }

    /// Reads chunks, parses them, and reconnects when the sequence allows it.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private let sequence: ServerSentEvents
        private var parser: ServerSentEventParser
        private var body: HTTPBodyChunks.AsyncIterator?
        private var pending: [ServerSentEvent] = []
        private var connections = 0
        private var reconnectsInARow = 0
        private var done = false

        init(sequence: ServerSentEvents) {
            self.sequence = sequence
            self.parser = ServerSentEventParser(maxLineLength: sequence.maxLineLength)
        }

        public mutating func next() async throws -> ServerSentEvent? {
            while true {
                if !pending.isEmpty { return pending.removeFirst() }
                if done { return nil }
                do {
                    if body == nil, try await !open() {
                        done = true
                        return nil
                    }
                    if let chunk = try await body?.next() {
                        pending = try parser.feed(chunk)
                        if !pending.isEmpty { reconnectsInARow = 0 }
                        continue
                    }
                    parser.finish()
                    body = nil
                    guard mayReconnect() else {
                        done = true
                        continue
                    }
                } catch {
                    body = nil
                    guard mayReconnect(), Self.isTransient(error) else {
                        done = true
                        throw error
                    }
                }
                reconnectsInARow += 1
                let delay =
                    parser.retry.map { Duration.milliseconds($0) } ?? sequence.reconnect.delay
                do {
                    try await Task.sleep(for: delay)
                } catch {
                    done = true
                    throw error
                }
            }
        }

        /// Opens the stream (again); false when there is nothing (more) to read.
        private mutating func open() async throws -> Bool {
            let response: HTTPStreamedResponse
            switch sequence.source {
            case .response(let given):
                guard connections == 0 else { return false }
                response = given
            case .connect(let connect):
                let id = parser.lastEventID
                response = try await connect(id.isEmpty ? nil : id)
                if response.status == 204 { return false }
                guard response.mediaType == "text/event-stream" else {
                    throw StreamError(
                        .unexpectedContentType,
                        "an event stream came as \"\(response.mediaType ?? "no content type")\", "
                            + "not text/event-stream",
                        url: response.url, status: response.status,
                        bodyPrefix: await response.bodyPrefix())
                }
            }
            connections += 1
            // A new connection parses from scratch; only the last event id and retry carry over.
            parser = ServerSentEventParser(
                maxLineLength: sequence.maxLineLength, lastEventID: parser.lastEventID,
                retry: parser.retry)
            body = response.body.makeAsyncIterator()
            return true
        }

        private func mayReconnect() -> Bool {
            guard case .connect = sequence.source, !Task.isCancelled else { return false }
            return reconnectsInARow < sequence.reconnect.maxAttempts
        }

        /// A failure a new connection may cure.
        private static func isTransient(_ error: any Error) -> Bool {
            guard let error = error as? HTTPError else { return false }
            return [.network, .timeout, .connect, .dns, .badResponse].contains(error.kind)
        }
    }
}
