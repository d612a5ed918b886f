import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The session delegate of ``URLSessionHTTPClient``: collects each task's body under the size
/// cap, declines redirects and resumes the waiting caller when the task ends.
final class URLSessionTaskRouter: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    struct Outcome: Sendable {
        var response: HTTPURLResponse
        var body: Data
    }

    /// A class, so that appending a chunk mutates the body in place: a struct copied out of the
    /// table and back would copy the whole body on every chunk.
    final class Transfer {
        let continuation: CheckedContinuation<Outcome, any Error>
        let url: URL
        let maxBytes: Int
        /// The file the body goes to, when the request asked for one; then no cap applies.
        let sink: BodyFileWriter?
        /// The streaming reader the body goes to, when the request streams it.
        let channel: BodyChunkChannel?
        /// The request's progress handler, and the figures it is told.
        let progress: ProgressReporter?
        var figures = TransferProgress(sent: 0, totalToSend: nil, received: 0, totalToReceive: nil)
        var response: HTTPURLResponse?
        var body = Data()
        var overCap = false
        var challenged: HTTPURLResponse?
        /// Whether the request may get a body back (not HEAD).
        let expectsBody: Bool
        /// Why the response was refused when its head came (its framing or coding).
        var refusal: String?
        /// The task, for a shutdown to cancel it.
        var task: URLSessionTask?

        init(
            continuation: CheckedContinuation<Outcome, any Error>, url: URL, maxBytes: Int,
            sink: BodyFileWriter?, expectsBody: Bool = true,
            destination: ResponseBodyDestination = .memory,
            progress: ProgressHandler? = nil, bodyLength: Int64? = nil
        ) {
            self.progress = progress.map(ProgressReporter.init)
            figures.totalToSend = bodyLength
            self.continuation = continuation
            self.url = url
            self.maxBytes = maxBytes
            self.sink = sink
            self.expectsBody = expectsBody
            self.channel = destination.channel
        }
    }

    private let transfers = Locked<[Int: Transfer]>([:])
    /// Where tasks are cancelled. `URLSessionTask.cancel()` waits (`sync`) for the session's
    /// work queue, and a task taking a fast endless body, or a header block of many thousand
    /// lines, keeps that queue busy: a cancel waited 5 to 74 s (Swift 6.3.1, `/endless-fast`)
    /// while the body kept arriving. So no caller, deadline or delegate callback waits for a
    /// cancel: the transfer is ended here first (its caller resumed, its file closed) and the
    /// cancel goes on this queue, which alone may wait.
    private let canceller = DispatchQueue(label: "courier-urlsession-cancel")

    /// Set once the session is being invalidated (``invalidate(_:)``): a cancel queued before
    /// it has run, and one queued after it would find its task gone from the session.
    private let invalidated = Locked(false)

    /// Cancels `task` on ``canceller``, unless the session was invalidated first.
    private func cancelLater(_ task: URLSessionTask) {
        canceller.async { [invalidated] in
            // FoundationNetworking traps ("a task that is not in the registry") when a task
            // of an invalidated session is cancelled: invalidateAndCancel cancelled it already.
            guard !invalidated.withLock({ $0 }) else { return }
            task.cancel()
        }
    }

    /// Invalidates `session` (cancelling its tasks) after every cancel already queued, on the
    /// same queue, so that no cancel of ours runs against a session that let its tasks go. A
    /// client going away calls it; nothing waits for it.
    func invalidate(_ session: URLSession) {
        canceller.async { [invalidated] in
            invalidated.withLock { $0 = true }
            session.invalidateAndCancel()
        }
    }

    /// Set by ``shutDown()``: no transfer may start after it.
    private let closed = Locked(false)

    /// Whether ``shutDown()`` was called.
    var isShutDown: Bool { closed.withLock { $0 } }

    func register(_ task: URLSessionTask, _ transfer: Transfer) {
        transfer.task = task
        transfers.withLock { $0[task.taskIdentifier] = transfer }
        // Registered after a shutdown drained the others: ended here (`end` runs once).
        if isShutDown {
            end(task) { HTTPError(.cancelled, "the client shut down", url: $0.url) }
        }
    }

    /// Ends every transfer under way with `.cancelled`, at once, and refuses new ones.
    func shutDown() {
        closed.withLock { $0 = true }
        let tasks = transfers.withLock { Array($0.keys) }
        for identifier in tasks {
            guard let transfer = transfers.withLock({ $0.removeValue(forKey: identifier) })
            else { continue }
            transfer.sink?.close()
            transfer.continuation.resume(
                throwing: HTTPError(.cancelled, "the client shut down", url: transfer.url))
            if let task = transfer.task { cancelLater(task) }
        }
    }

    /// Ends a task that was cancelled before it started, without starting it.
    func abandon(_ task: URLSessionTask) {
        end(task) { HTTPError(.cancelled, "the request was cancelled", url: $0.url) }
    }

    /// Ends the task as cancelled by its caller, at once (see ``canceller``).
    func cancel(_ task: URLSessionTask) {
        end(task) { HTTPError(.cancelled, "the request was cancelled", url: $0.url) }
    }

    /// Ends the task as timed out, at once: FoundationNetworking on Linux does not enforce
    /// `URLRequest.timeoutInterval` as a whole-request deadline, and its own cancel can take
    /// many seconds to land, so the client resumes the caller itself and closes the file; the
    /// body's later chunks are dropped unread.
    func expire(_ task: URLSessionTask) {
        end(task) { HTTPError(.timeout, "no complete response in time", url: $0.url) }
    }

    /// Removes the task's transfer (so that later callbacks for it do nothing), closes its
    /// file after any write in progress, resumes its caller with `error`, then cancels the
    /// task without waiting for it. Does nothing when the transfer has already ended.
    private func end(_ task: URLSessionTask, with error: (Transfer) -> HTTPError) {
        guard let transfer = transfers.withLock({ $0.removeValue(forKey: task.taskIdentifier) })
        else { return }
        transfer.sink?.close()
        transfer.continuation.resume(throwing: error(transfer))
        cancelLater(task)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        if let http = response as? HTTPURLResponse,
            case let bytes = ResponseHeaderLimit.estimatedBytes(of: Self.fields(of: http)),
            bytes > ResponseHeaderLimit.maxBytes
        {
            // Only now, parsed: FoundationNetworking gives no say while it reads the block.
            end(dataTask) {
                HTTPError(.badResponse, ResponseHeaderLimit.message(bytes: bytes), url: $0.url)
            }
            completionHandler(.cancel)
            return
        }
        let allowed = transfers.withLock { transfers -> Bool in
            guard let transfer = transfers[dataTask.taskIdentifier] else { return false }
            transfer.response = response as? HTTPURLResponse
            if let http = transfer.response {
                transfer.refusal = Self.refusal(of: http, expectsBody: transfer.expectsBody)
                if transfer.refusal != nil { return false }
            }
            if response.expectedContentLength >= 0 {
                transfer.figures.totalToReceive = response.expectedContentLength
            }
            if let channel = transfer.channel, let http = transfer.response {
                channel.deliver(
                    status: http.statusCode, headers: URLSessionHTTPClient.headers(of: http))
            }
            if transfer.sink == nil, transfer.channel == nil,
                response.expectedContentLength > Int64(transfer.maxBytes)
            {
                transfer.overCap = true
            }
            return !transfer.overCap
        }
        completionHandler(allowed ? .allow : .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        // One lock per chunk. A body going to a file is written after it, outside: the
        // delegate queue is serial, so a slow disk holds up this session's callbacks, not the
        // threads registering or expiring tasks.
        var sink: BodyFileWriter?
        var channel: BodyChunkChannel?
        var report: (ProgressReporter, TransferProgress)?
        var url: URL?
        let overCap = transfers.withLock { transfers -> Bool in
            guard let transfer = transfers[dataTask.taskIdentifier] else { return false }
            url = transfer.url
            sink = transfer.sink
            channel = transfer.channel
            transfer.figures.received += Int64(data.count)
            report = transfer.progress.map { ($0, transfer.figures) }
            guard sink == nil, channel == nil else { return false }
            if transfer.body.count + data.count > transfer.maxBytes {
                transfer.overCap = true
                transfer.body = Data()
            } else {
                transfer.body.append(data)
            }
            return transfer.overCap
        }
        if overCap {
            // Ended here, not when FoundationNetworking gets round to the cancel: an endless
            // body would keep coming until then.
            end(dataTask) { transfer in
                HTTPError(
                    .bodyTooLarge, "response body larger than \(transfer.maxBytes) bytes",
                    url: transfer.url)
            }
            return
        }
        if let (reporter, figures) = report { reporter.update(figures) }
        // A sink closed by the deadline refuses the write: no byte goes in after it.
        if let sink, !data.withUnsafeBytes({ sink.write($0) }) {
            if let url, let failed = sink.error(url: url) {
                end(dataTask) { _ in failed }
            }
            return
        }
        // URLSession cannot be paused: chunks are taken up to the channel's ceiling, a reader
        // too far behind ends the transfer (memory stays bounded), and a gone one stops it.
        guard let channel else { return }
        switch data.withUnsafeBytes({ channel.offer($0, canWait: false) }) {
        case .taken, .full: break
        case .readerGone: cancelLater(dataTask)
        case .readerTooFarBehind: end(dataTask) { channel.backlogError(url: $0.url) }
        }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
        totalBytesSent: Int64, totalBytesExpectedToSend: Int64
    ) {
        let report = transfers.withLock { transfers -> (ProgressReporter, TransferProgress)? in
            guard let transfer = transfers[task.taskIdentifier] else { return nil }
            transfer.figures.sent = totalBytesSent
            return transfer.progress.map { ($0, transfer.figures) }
        }
        if let (reporter, figures) = report { reporter.update(figures) }
    }

    /// Authentication is the caller's business: a 401 with `WWW-Authenticate` must come back as
    /// a response, body and all. FoundationNetworking on Linux challenges only for a `Basic`
    /// challenge with a realm, once the whole 401 has been read and handed to this delegate
    /// (head and body chunks, in order on its queue); it stalls on `.performDefaultHandling`
    /// without a stored credential, traps on `.useCredential` without one, and cancels the
    /// task on `.rejectProtectionSpace` as on `.cancelAuthenticationChallenge`: there is no
    /// "continue without credentials". So the challenge's response is kept, the challenge
    /// cancelled, and the 401 returned with the body already collected (docs/transports.md).
    /// Server-trust challenges (Darwin) get the system's default handling, so HTTPS keeps
    /// working there.
    func urlSession(
        _ session: URLSession, task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        #if !canImport(FoundationNetworking)
            if challenge.protectionSpace.authenticationMethod
                == NSURLAuthenticationMethodServerTrust
            {
                completionHandler(.performDefaultHandling, nil)
                return
            }
        #endif
        if let failure = challenge.failureResponse as? HTTPURLResponse {
            transfers.withLock { $0[task.taskIdentifier]?.challenged = failure }
        }
        completionHandler(.cancelAuthenticationChallenge, nil)
    }

    /// Redirects are the redirect policy's business: hand the 3xx back as the response.
    func urlSession(
        _ session: URLSession, task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
        completionHandler: @escaping (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?
    ) {
        guard let transfer = transfers.withLock({ $0.removeValue(forKey: task.taskIdentifier) })
        else { return }
        transfer.sink?.close()
        if let refusal = transfer.refusal {
            transfer.continuation.resume(
                throwing: HTTPError(.network, refusal, url: transfer.url))
        } else if let failed = transfer.sink?.error(url: transfer.url) {
            transfer.continuation.resume(throwing: failed)
        } else if transfer.overCap {
            transfer.continuation.resume(
                throwing: HTTPError(
                    .bodyTooLarge, "response body larger than \(transfer.maxBytes) bytes",
                    url: transfer.url))
        } else if let challenged = transfer.challenged {
            // The body came before the challenge (to memory, the file or the reader); the
            // cancel that followed it ended nothing but the task.
            transfer.continuation.resume(
                returning: Outcome(response: challenged, body: transfer.body))
        } else if let error {
            let head = transfer.response ?? task.response as? HTTPURLResponse
            transfer.continuation.resume(
                throwing: Self.httpError(
                    error, url: transfer.url,
                    contentEncoding: head?.value(forHTTPHeaderField: "Content-Encoding")))
        } else if let response = transfer.response ?? task.response as? HTTPURLResponse {
            transfer.continuation.resume(
                returning: Outcome(response: response, body: transfer.body))
        } else {
            transfer.continuation.resume(
                throwing: HTTPError(.network, "no HTTP response", url: transfer.url))
        }
    }

    /// Why a response cannot be taken, judged from its head: a Content-Length that is not a
    /// number that fits (libcurl reads such a body to the close and calls it whole), or a
    /// coding that neither transport decodes (refused on curl too). A compressed body in a
    /// coding Courier decodes is taken (``uncheckedCoding(of:expectsBody:)``). A response without
    /// a body (HEAD, 204, 304, Content-Length 0) is not refused for its coding.
    static func refusal(of response: HTTPURLResponse, expectsBody: Bool) -> String? {
        let length = response.value(forHTTPHeaderField: "Content-Length")
        if let length, let problem = ResponseFraming.contentLengthProblem(length) {
            return problem
        }
        let coding = ResponseFraming.coding(
            of: response.value(forHTTPHeaderField: "Content-Encoding"))
        guard case .unsupported = coding, hasBody(response, expectsBody: expectsBody) else {
            return nil
        }
        return ResponseFraming.unsupportedCodingMessage(coding)
    }

    /// The coding of a compressed body whose end cannot be checked, or `nil`: FoundationNetworking
    /// has its libcurl decode the body and hands over only decoded bytes, with nothing that says
    /// whether the compressed stream ended, so a stream cut in whole HTTP framing reads as whole
    /// (``HTTPResponse/bodyEndUnchecked``).
    static func uncheckedCoding(of response: HTTPURLResponse, expectsBody: Bool) -> String? {
        let coding = ResponseFraming.coding(
            of: response.value(forHTTPHeaderField: "Content-Encoding"))
        guard coding != .identity, hasBody(response, expectsBody: expectsBody) else { return nil }
        return coding.name
    }

    /// Whether the response may carry a body: not one to a HEAD, not 1xx, 204 or 304, and not
    /// with Content-Length 0.
    static func hasBody(_ response: HTTPURLResponse, expectsBody: Bool) -> Bool {
        expectsBody && ![204, 304].contains(response.statusCode)
            && !(100..<200).contains(response.statusCode)
            && response.value(forHTTPHeaderField: "Content-Length") != "0"
    }

    static func fields(of response: HTTPURLResponse) -> [(name: String, value: String)] {
        response.allHeaderFields.compactMap { name, value in
            (name as? String).map { (name: $0, value: "\(value)") }
        }
    }

    /// libcurl's own limit on a header block (300 KiB in 7.88), in its words, which
    /// FoundationNetworking passes on in the underlying error of a `URLError(.unknown)`.
    static func isOversizedHeaderBlock(_ error: URLError) -> Bool {
        let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
        return [error.localizedDescription, underlying?.localizedDescription ?? ""].contains {
            $0.contains("Too large response headers")
        }
    }

    /// libcurl's words for a reply that is not HTTP, as FoundationNetworking passes them on.
    static func isMalformedReplyText(_ text: String) -> Bool {
        text.contains("response code") || text.contains("HTTP/0.9")
            || text.contains("Weird server reply")
    }

    /// - Parameter contentEncoding: the response's `Content-Encoding`, when a head came: a
    ///   body its coding does not decode is said as the curl transport says it.
    static func httpError(_ error: any Error, url: URL, contentEncoding: String? = nil)
        -> HTTPError
    {
        guard let urlError = error as? URLError else {
            return HTTPError(.network, "\(error)", url: url)
        }
        if isOversizedHeaderBlock(urlError) {
            return HTTPError(
                .badResponse, ResponseHeaderLimit.message(bytes: 300 << 10), url: url,
                underlyingCode: urlError.code.rawValue)
        }
        let kind: HTTPError.Kind =
            switch urlError.code {
            case .timedOut: .timeout
            case .cannotFindHost, .dnsLookupFailed: .dns
            case .cannotConnectToHost, .notConnectedToInternet: .connect
            case .cancelled: .cancelled
            // FoundationNetworking passes on libcurl's "unsupported protocol" for a reply it
            // cannot read (a malformed status line, HTTP/0.9) as .unsupportedURL.
            case .unsupportedURL where isMalformedReplyText(urlError.localizedDescription):
                .badResponse
            case .badURL, .unsupportedURL: .invalidURL
            case .httpTooManyRedirects, .redirectToNonExistentLocation: .tooManyRedirects
            case .dataLengthExceedsMaximum: .bodyTooLarge
            case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
                .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot,
                .clientCertificateRejected, .clientCertificateRequired:
                .tls
            // FoundationNetworking reports curl's TLS failures (an untrusted certificate among
            // them) as .unknown with curl's text, so the text is all there is to go on.
            case .unknown where isTLSText(urlError.localizedDescription): .tls
            default: .network
            }
        // FoundationNetworking runs libcurl too, and passes on its misleading text.
        var text =
            urlError.localizedDescription == "Out of memory"
            ? HTTPError.oversizedHeadersMessage : urlError.localizedDescription
        // libcurl's decoder's words, in the curl transport's (a trial saw the two differ).
        let undecodable = "Error while processing content unencoding: "
        if text.hasPrefix(undecodable) {
            let coding =
                contentEncoding?.split(separator: ",").last?
                .trimmingCharacters(in: .whitespaces).lowercased() ?? "content coding's"
            text = "the \(coding) stream is not valid: \(text.dropFirst(undecodable.count))"
        }
        return HTTPError(kind, text, url: url, underlyingCode: urlError.code.rawValue)
    }

    static func isTLSText(_ text: String) -> Bool {
        let lowered = text.lowercased()
        return ["ssl", "tls", "certificate"].contains { lowered.contains($0) }
    }
}
