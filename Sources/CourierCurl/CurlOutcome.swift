import CCurl
import Courier
import Foundation

/// The one rule that turns how a transfer ended into its caller's answer: curl's result code,
/// the response head, what became of the body and whether the loop ended the transfer itself
/// become one ``HTTPResponse`` or one ``HTTPError``.
///
/// A pure value of plain facts, so that which error wins when several apply is tested without
/// a network (`CurlOutcomeTests`). ``CurlTransfer/outcome(of:on:)`` gathers the facts; the event
/// loop only hands ``result`` to the caller. Which error wins, first to last:
///
/// 1. the loop cancelled the transfer (the caller, or the client's shutdown): `.cancelled`;
/// 2. the header block passed ``ResponseHeaderLimit/maxBytes``: `.badResponse`;
/// 3. a Content-Length that frames nothing, or a body refused as it came (a corrupt stream, a
///    coding not decoded): `.network`, before curl's code, since curl may have failed the
///    transfer its own way for the same bytes (an overflowing length passes the size cap);
/// 4. curl failed, and the body's file could not be written or the streamed request body
///    read: that `.file` error, the cause of curl's;
/// 5. curl failed because a third send was refused (``CurlTransfer/maximumSends``): `.network`
///    with `CURLE_GOT_NOTHING`;
/// 6. curl failed and the body passed the size cap: `.bodyTooLarge`;
/// 7. curl failed otherwise: ``CurlErrorMapping``'s kind, with curl's text (a header line over
///    libcurl's limit, `CURLE_OUT_OF_MEMORY`, in words of our own);
/// 8. curl succeeded but the header block never ended: `.network` (a cut head);
/// 9. curl succeeded but the compressed stream never ended: `.network` (a cut body);
/// 10. otherwise the response.
struct CurlOutcome {
    /// How the transfer ended.
    enum Ending: Equatable {
        /// curl finished it with this code.
        case curl(CURLcode)
        /// The loop ended it before curl did.
        case cancelled(Cancellation)
    }

    /// Why the loop ended a transfer itself.
    enum Cancellation: Equatable {
        /// The caller's task was cancelled, or the loop stopped before the transfer started.
        case byCaller
        /// The client shut down while the transfer was in the multi handle.
        case byShutdown
    }

    /// Where the response body went.
    enum Body {
        /// In memory, whole.
        case memory(Data)
        /// To the file the request asked for.
        case file(SavedBody)
        /// To the `stream(_:)` reader, chunk by chunk.
        case stream
    }

    var ending: Ending
    /// The request's URL for errors: credentials and secret query values removed.
    var url: URL
    /// curl's own words for a failed code (its error buffer), when it wrote any.
    var curlDetail: String? = nil
    /// The header lines as parsed: the final response's fields, whether its block ended, and
    /// whether its Content-Length frames a body.
    var head = ResponseHead()
    /// The status curl read (`CURLINFO_RESPONSE_CODE`), which the response reports.
    var status = 0
    /// Bytes of header lines received, every response of the transfer counted.
    var headerBytes = 0
    /// Why the write callback refused the body (a corrupt stream, a coding not decoded).
    var bodyProblem: String? = nil
    /// The body, or its announced length, passed the size cap.
    var overCap = false
    var maxBodyBytes = 0
    /// A failed write of the body's file, a failed read of the streamed request body, or a
    /// streaming reader too far behind a decoded body.
    var fileError: HTTPError? = nil
    /// How many times curl was about to send the request.
    var sends = 1
    /// The content coding (gzip, deflate, br, zstd) whose stream did not reach its end, if one
    /// did not.
    var unendedCoding: String? = nil
    var body = Body.memory(Data())
    /// The URL the response reports: the one sent, without credentials.
    var responseURL: URL? = nil
    var requestHeaders = HTTPHeaders()
    var timings = HTTPTimings()
    /// What the request marked secret, for the response's description.
    var secrets = RequestSecrets()

    /// The caller's answer.
    var result: Result<HTTPResponse, HTTPError> {
        let code: CURLcode
        switch ending {
        case .cancelled(let cancellation): return .failure(Self.error(cancellation, url: url))
        case .curl(let ended): code = ended
        }
        if let failure = refusal(code) ?? curlFailure(code) ?? framingFailure() {
            return .failure(failure)
        }
        let (data, saved): (Data, SavedBody?) =
            switch body {
            case .memory(let data): (data, nil)
            case .file(let saved): (Data(), saved)
            case .stream: (Data(), nil)
            }
        var response = HTTPResponse(
            status: status, headers: head.headers, body: data, url: responseURL ?? url,
            timings: timings, requestHeaders: requestHeaders, savedBody: saved)
        response.secrets = secrets
        return .success(response)
    }

    /// The error of a transfer the loop ended itself.
    static func error(_ cancellation: Cancellation, url: URL) -> HTTPError {
        switch cancellation {
        case .byCaller: HTTPError(.cancelled, "the request was cancelled", url: url)
        case .byShutdown: HTTPError(.cancelled, "the client shut down", url: url)
        }
    }

    /// Rules 2 and 3: what the callbacks refused, whatever curl made of it.
    private func refusal(_ code: CURLcode) -> HTTPError? {
        if headerBytes > ResponseHeaderLimit.maxBytes {
            return HTTPError(
                .badResponse, ResponseHeaderLimit.message(bytes: headerBytes), url: url,
                underlyingCode: Int(code.rawValue))
        }
        if let refusal = head.contentLengthProblem ?? bodyProblem {
            return HTTPError(.network, refusal, url: url, underlyingCode: Int(code.rawValue))
        }
        return nil
    }

    /// Rules 4 to 7: curl failed the transfer.
    private func curlFailure(_ code: CURLcode) -> HTTPError? {
        guard code != CURLE_OK else { return nil }
        if let fileError { return fileError }
        if code == CURLE_ABORTED_BY_CALLBACK, sends > CurlTransfer.maximumSends {
            return HTTPError(
                .network,
                "the connection closed without an answer, on two kept-alive connections in turn: not sent a third time",
                url: url, underlyingCode: Int(CURLE_GOT_NOTHING.rawValue))
        }
        if overCap || code == CURLE_FILESIZE_EXCEEDED {
            return HTTPError(
                .bodyTooLarge, "response body larger than \(maxBodyBytes) bytes", url: url,
                underlyingCode: Int(code.rawValue))
        }
        let text =
            code == CURLE_OUT_OF_MEMORY
            ? HTTPError.oversizedHeadersMessage
            : curlDetail ?? String(cString: curl_easy_strerror(code))
        return HTTPError(
            CurlErrorMapping.kind(of: code), text, url: url, underlyingCode: Int(code.rawValue))
    }

    /// Rules 8 and 9: curl called the transfer done, but the response is not whole.
    private func framingFailure() -> HTTPError? {
        if !head.isComplete { return HTTPError(.network, ResponseFraming.cutHeadMessage, url: url) }
        if let coding = unendedCoding {
            return HTTPError(.network, ResponseFraming.cutStreamMessage(coding), url: url)
        }
        return nil
    }
}
