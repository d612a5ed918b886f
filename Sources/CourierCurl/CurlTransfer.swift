import CCurl
import Courier
import Foundation

/// One request in flight: what was asked, what has arrived, and who waits for it.
///
/// After submission only the event-loop thread touches it (curl calls the callbacks there);
/// `cancelRequested` is the one field other threads write, under the loop's lock. Where it is
/// in its life is ``state``; how it ends is ``CurlOutcome``'s to decide.
final class CurlTransfer: @unchecked Sendable {
    let request: HTTPRequest
    /// What goes on the wire: the URL without credentials and every header field.
    let wire: WireRequest
    /// The URL for error messages: credentials and secret query values removed.
    let displayURL: URL
    let maxBodyBytes: Int
    /// The file the body goes to, when the request asked for one; then no cap applies.
    let sink: BodyFileWriter?
    /// The streamed request body, read by curl's read callback.
    let upload: StreamedBodyReader?
    /// The reader the body goes to chunk by chunk, when the request streams it.
    let channel: BodyChunkChannel?
    /// Reports progress to the request's handler, when it has one.
    let progress: ProgressReporter?
    /// Asks the loop to unpause this transfer once the reader has caught up (set by the loop).
    var unpause: (@Sendable () -> Void)?
    private let pool: BodyBufferPool
    var continuation: CheckedContinuation<HTTPResponse, any Error>?
    /// Set by the caller's cancellation handler, read by the loop (both under the loop's lock).
    var cancelRequested = false
    /// Queued, running, paused or finished, with the easy handle while it is in the multi
    /// handle (loop thread only).
    var state = CurlTransferState.queued
    /// How many times curl has been about to send the request (loop thread only).
    private(set) var sends = 0

    /// libcurl sends a request again by itself when the kept-alive connection it used closed
    /// before any answer came (the server timed it out as it was reused), up to five times, each
    /// time on another kept-alive connection. Against a server that drops this one request,
    /// that cost up to six connections and six requests for one logged attempt. One resend
    /// still covers the race it is for; a third send is refused, the transfer fails as a
    /// network error, and the retry policy, which logs each attempt, decides.
    static let maximumSends = 2

    /// Counts a send; whether curl may go ahead.
    func startingSend() -> Bool {
        sends += 1
        return sends <= Self.maximumSends
    }

    /// The status and fields of the final response so far.
    private(set) var head = ResponseHead()
    var status: Int { head.status }
    var headers: HTTPHeaders { head.headers }
    /// The body, when it is small or its length was not announced.
    private var smallBody = Data()
    /// The body, when Content-Length announced a large one: a pooled buffer.
    private var pooled: (buffer: UnsafeMutableRawPointer, size: Int, count: Int)?
    private(set) var overCap = false
    /// Decodes a gzip, deflate, br or zstd body (set at the first body byte; ``ContentDecoder``).
    private(set) var decoder: ContentDecoder?
    /// Why the body was refused while it arrived (a corrupt stream, a coding not decoded),
    /// when the write callback stopped the transfer for that reason.
    private(set) var bodyProblem: String?
    /// A decoded body's reader fell too far behind (``BodyChunkChannel/backlogCeiling``).
    private(set) var readerTooFarBehind: HTTPError?
    /// Bytes of header lines received, status lines included (loop thread only).
    private(set) var headerBytes = 0
    /// The final response's Content-Length, to size the body buffer once.
    var expectedLength: Int { head.expectedLength }

    init(
        request: HTTPRequest, wire: WireRequest, maxBodyBytes: Int, sink: BodyFileWriter?,
        upload: StreamedBodyReader? = nil, pool: BodyBufferPool
    ) {
        self.request = request
        self.sink = sink
        self.upload = upload
        self.progress = request.progress.map(ProgressReporter.init)
        self.channel = request.bodyDestination.channel
        self.wire = wire
        self.displayURL = request.displayURL
        self.maxBodyBytes = maxBodyBytes
        self.pool = pool
    }

    deinit {
        if let pooled { pool.give(pooled.buffer, size: pooled.size) }
    }

    /// The request body's length, when it has one.
    var bodyLength: Int64? {
        upload.map { Int64($0.length) } ?? request.body.map { Int64($0.count) }
    }

    /// Bytes of body received so far.
    var bodyCount: Int { pooled?.count ?? smallBody.count }

    /// Hands the body over; a pooled buffer goes back to the pool when the `Data` is freed.
    func takeBody() -> Data {
        guard let pooled else { return smallBody }
        self.pooled = nil
        return pool.data(pooled.buffer, count: pooled.count, size: pooled.size)
    }

    /// Resumes the caller once; later calls do nothing.
    func finish(_ result: Result<HTTPResponse, HTTPError>) {
        guard let continuation else { return }
        self.continuation = nil
        sink?.close()
        continuation.resume(with: result.mapError { $0 as any Error })
    }

    /// What the write callback returns for `bytes`: their count when taken, curl's pause
    /// value when the streaming reader is behind, 0 to abort.
    func written(_ bytes: UnsafeRawBufferPointer) -> Int {
        if state.bodyArrived() {
            // The first body byte comes after the final response's last header field.
            let coding = ResponseFraming.coding(of: headers["Content-Encoding"])
            if coding != .identity {
                decoder = ContentDecoder(coding)
                if decoder == nil {
                    bodyProblem = ResponseFraming.unsupportedCodingMessage(coding)
                    return 0
                }
            }
        }
        if let decoder { return decoded(bytes, by: decoder) }
        return delivered(bytes)
    }

    /// Decoded pieces go on as they come. A streaming reader cannot make curl pause here (the
    /// decoded bytes could not be given back for curl to deliver again), so it is offered them
    /// as URLSession offers every chunk: taken, waiting in memory if it is behind.
    private func decoded(_ bytes: UnsafeRawBufferPointer, by decoder: ContentDecoder) -> Int {
        if let channel, !channel.hasHead { channel.deliver(status: status, headers: headers) }
        let outcome = decoder.decode(bytes) { piece in
            guard let channel else { return receive(piece) }
            switch channel.offer(piece, canWait: false) {
            case .taken, .full: return true
            case .readerGone: return false
            case .readerTooFarBehind:
                readerTooFarBehind = channel.backlogError(url: displayURL)
                return false
            }
        }
        switch outcome {
        case .decoded: return bytes.count
        case .refused: return 0
        case .corrupt(let reason):
            bodyProblem = "the \(decoder.coding.name) stream is not valid: \(reason)"
            return 0
        }
    }

    /// Body bytes as they came: to the streaming reader (which may ask curl to pause), a file
    /// or memory.
    private func delivered(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard let channel else { return receive(bytes) ? bytes.count : 0 }
        // The first body byte comes after the final response's last header field.
        if !channel.hasHead { channel.deliver(status: status, headers: headers) }
        switch channel.offer(bytes, canWait: true, resume: unpause) {
        case .taken: return bytes.count
        case .full:
            state.pause()
            return Int(CURL_WRITEFUNC_PAUSE)
        case .readerGone, .readerTooFarBehind: return 0
        }
    }

    /// Appends body bytes; returns false when they would pass the size cap.
    func receive(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if let sink { return sink.write(bytes) }
        let count = bodyCount
        guard count + bytes.count <= maxBodyBytes else {
            overCap = true
            return false
        }
        if count == 0, pooled == nil, expectedLength >= BodyBufferPool.minimumSize,
            expectedLength <= maxBodyBytes
        {
            let (buffer, size) = pool.take(expectedLength)
            pooled = (buffer, size, 0)
        }
        if var target = pooled {
            if target.count + bytes.count <= target.size {
                (target.buffer + target.count).copyMemory(
                    from: bytes.baseAddress!, byteCount: bytes.count)
                target.count += bytes.count
                pooled = target
                return true
            }
            // More than Content-Length announced: carry on in ordinary Data.
            smallBody = Data(bytes: target.buffer, count: target.count)
            pool.give(target.buffer, size: target.size)
            pooled = nil
        }
        smallBody.append(contentsOf: bytes)
        return true
    }

    /// Takes one raw header line (``ResponseHead/receive(_:)``); false stops the transfer, for a
    /// Content-Length that cannot frame the body (libcurl would read such a body to the close)
    /// or that announces more than the cap.
    func receiveHeaderLine(_ bytes: UnsafeRawBufferPointer) -> Bool {
        // Counted before the line is parsed, over every response of the transfer (1xx too), so
        // that no header block costs more than the bound to read (``ResponseHeaderLimit``).
        headerBytes += bytes.count
        guard headerBytes <= ResponseHeaderLimit.maxBytes else { return false }
        let wasComplete = head.isComplete
        head.receive(bytes)
        guard head.contentLengthProblem == nil else { return false }
        if head.isComplete, !wasComplete, announcesTooMuch {
            overCap = true
            return false
        }
        return true
    }

    /// Whether the header block just ended announces a body over the cap: checked here rather
    /// than with CURLOPT_MAXFILESIZE, with which curl fails an overflowing Content-Length as
    /// too large before this transfer could see that it is not a number at all.
    private var announcesTooMuch: Bool {
        sink == nil && channel == nil && request.method != .head && status != 204
            && status != 304 && !(100..<200).contains(status) && expectedLength > maxBodyBytes
    }

    /// What ``CurlOutcome`` decides on, once curl finished the transfer with `code` on
    /// `handle` (after `curl_multi_remove_handle`: curl keeps a handle's info until reset).
    /// The file and the upload are asked for their errors only when curl failed: a failed
    /// write or read is what made it fail, and a success takes no lock for them.
    func outcome(of code: CURLcode, on handle: CurlEasyHandle) -> CurlOutcome {
        let failed = code != CURLE_OK
        var status = 0
        _ = ccurl_easy_getinfo_long(handle.raw, CURLINFO_RESPONSE_CODE, &status)
        let body: CurlOutcome.Body =
            if let sink { .file(sink.saved) } else if channel != nil { .stream } else {
                .memory(takeBody())
            }
        return CurlOutcome(
            ending: .curl(code), url: displayURL, curlDetail: failed ? handle.errorDetail : nil,
            head: head, status: status, headerBytes: headerBytes, bodyProblem: bodyProblem,
            overCap: overCap, maxBodyBytes: maxBodyBytes,
            fileError: failed
                ? sink?.error(url: displayURL) ?? upload?.error(url: displayURL)
                    ?? readerTooFarBehind : nil,
            sends: sends,
            unendedCoding: decoder.flatMap { $0.ended ? nil : $0.coding.name },
            body: body, responseURL: wire.url, requestHeaders: wire.headers,
            timings: handle.timings, secrets: RequestSecrets(of: request))
    }

    /// Ends the progress reports on curl's totals for an answered transfer: curl's last
    /// progress call may come before the last bytes.
    func reportFinalProgress(on handle: CurlEasyHandle) {
        guard let progress else { return }
        var received: curl_off_t = 0
        var sent: curl_off_t = 0
        _ = ccurl_easy_getinfo_off_t(handle.raw, CURLINFO_SIZE_DOWNLOAD_T, &received)
        _ = ccurl_easy_getinfo_off_t(handle.raw, CURLINFO_SIZE_UPLOAD_T, &sent)
        var announced: curl_off_t = -1
        _ = ccurl_easy_getinfo_off_t(handle.raw, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &announced)
        progress.update(
            TransferProgress(
                sent: Int64(sent), totalToSend: bodyLength, received: Int64(received),
                totalToReceive: announced >= 0 ? Int64(announced) : nil))
    }
}

/// CURLOPT_WRITEFUNCTION: body bytes for the transfer in `context`.
let curlWriteCallback: ccurl_data_callback = { data, size, count, context in
    guard let data, let context else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    // Returning less than `length` makes curl abort the transfer with CURLE_WRITE_ERROR.
    return transfer.written(UnsafeRawBufferPointer(start: data, count: length))
}

/// CURLOPT_READFUNCTION: the next bytes of a streamed request body.
let curlReadCallback: ccurl_data_callback = { data, size, count, context in
    guard let data, let context else { return Int(CURL_READFUNC_ABORT) }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    let buffer = UnsafeMutableRawBufferPointer(start: data, count: size * count)
    // A failed read aborts the transfer; the loop reports the reader's own error.
    return transfer.upload?.read(into: buffer) ?? Int(CURL_READFUNC_ABORT)
}

/// CURLOPT_XFERINFOFUNCTION: byte counts, reported to the request's progress handler.
let curlProgressCallback: ccurl_progress_callback = {
    context, downloadTotal, downloadNow, uploadTotal, uploadNow in
    guard let context else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    let sending = transfer.bodyLength
    transfer.progress?.update(
        TransferProgress(
            sent: Int64(uploadNow), totalToSend: sending,
            received: Int64(downloadNow),
            totalToReceive: downloadTotal > 0 ? Int64(downloadTotal) : nil))
    return 0
}

/// CURLOPT_SEEKFUNCTION: curl rewinds a streamed body to resend it (a reused connection that
/// turned out closed); only the start is ever asked for.
let curlSeekCallback: ccurl_seek_callback = { context, offset, origin in
    guard let context, offset == 0, origin == SEEK_SET else { return CURL_SEEKFUNC_CANTSEEK }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    transfer.upload?.rewind()
    return CURL_SEEKFUNC_OK
}

/// CURLOPT_PREREQFUNCTION: the request is about to be sent, on a new or a reused connection.
let curlPrereqCallback: ccurl_prereq_callback = { context, _, _, _, _ in
    guard let context else { return CURL_PREREQFUNC_OK }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    return transfer.startingSend() ? CURL_PREREQFUNC_OK : CURL_PREREQFUNC_ABORT
}

/// CURLOPT_HEADERFUNCTION: one header line at a time, status lines included.
let curlHeaderCallback: ccurl_data_callback = { data, size, count, context in
    guard let data, let context else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    // Returning less than `length` makes curl abort the transfer with CURLE_WRITE_ERROR.
    return transfer.receiveHeaderLine(UnsafeRawBufferPointer(start: data, count: length))
        ? length : 0
}
