import Foundation

extension HTTPClient {
    /// Sends the request and returns as soon as the response's head has arrived, with the body
    /// as an `AsyncSequence` of chunks read as they come.
    /// ```swift
    /// let response = try await client.stream(HTTPRequest(url: feedURL))
    /// for try await chunk in response.body { parser.feed(chunk) }
    /// ```
    /// Memory stays near `bufferLimit` however large the body: on the curl transport a reader
    /// that falls behind pauses the transfer; URLSession cannot be paused, so there chunks wait
    /// in memory, up to 64 times `bufferLimit`: a reader further behind gets the chunks that
    /// waited and then ``HTTPError/Kind/bodyTooLarge``. Stopping the loop early (or dropping the response) cancels the transfer. The
    /// client's `maxResponseBytes` does not apply; the request's deadline does, to the whole
    /// body. With a client that ignores ``HTTPRequest/bodyDestination`` (a stub, say) the body
    /// comes as one chunk.
    public func stream(_ request: HTTPRequest, bufferLimit: Int = 1 << 20) async throws
        -> HTTPStreamedResponse
    {
        let channel = BodyChunkChannel(bufferLimit: bufferLimit)
        var streamed = request
        streamed.bodyDestination = .stream(channel)
        let task = Task {
            do {
                let response = try await perform(streamed)
                if channel.deliver(status: response.status, headers: response.headers),
                    !response.body.isEmpty
                {
                    // The client ignored the destination: its body is the one chunk.
                    _ = response.body.withUnsafeBytes {
                        channel.offer($0, canWait: false, alreadyHeld: true)
                    }
                }
                channel.finish()
                return response
            } catch {
                channel.finish(error)
                throw error
            }
        }
        let head: BodyChunkChannel.Head
        do {
            head = try await withTaskCancellationHandler {
                try await channel.head()
            } onCancel: {
                task.cancel()
            }
        } catch {
            task.cancel()
            throw error
        }
        let owner = HTTPStreamedResponse.Owner(channel: channel, task: task)
        return HTTPStreamedResponse(
            status: head.status, headers: head.headers, url: request.url,
            body: HTTPBodyChunks(owner: owner))
    }
}

/// A response whose body is read as it arrives (``HTTPClient/stream(_:bufferLimit:)``).
public struct HTTPStreamedResponse: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    /// The URL that was requested.
    public var url: URL
    /// The body, chunk by chunk; iterate it once.
    public var body: HTTPBodyChunks

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(status) }

    /// Cancels the transfer when the last reference to the body goes.
    final class Owner: Sendable {
        let channel: BodyChunkChannel
        let task: Task<HTTPResponse, any Error>

        init(channel: BodyChunkChannel, task: Task<HTTPResponse, any Error>) {
            self.channel = channel
            self.task = task
        }

        deinit {
            channel.readerLeft()
            task.cancel()
        }
    }
}

/// The chunks of a streamed body, in order; the sequence ends with the body, or throws the
/// transfer's error (a timeout, a reset).
public struct HTTPBodyChunks: AsyncSequence, Sendable {
    public typealias Element = Data

    let owner: HTTPStreamedResponse.Owner

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(owner: owner) }

    /// Takes the next chunk, waiting for it when none has arrived.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let owner: HTTPStreamedResponse.Owner

        public mutating func next() async throws -> Data? {
            let owner = self.owner
            return try await withTaskCancellationHandler {
                try await owner.channel.next()
            } onCancel: {
                owner.task.cancel()
            }
        }
    }

    /// The most bytes that waited for the reader at once.
    package var peakBufferedBytes: Int { owner.channel.peakBufferedBytes }

    /// Whether the transfer has ended (chunks may still wait to be read).
    package var transferEnded: Bool { owner.channel.hasEnded }

    /// Every chunk joined: for bodies known to be small.
    public func collect() async throws -> Data {
        var all = Data()
        for try await chunk in self { all.append(chunk) }
        return all
    }
}
