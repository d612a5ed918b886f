import CCurl
import Courier
@testable import CourierCurl
import Foundation
import Testing

/// Which answer a finished curl transfer comes to, when one or several things went wrong: each
/// precedence rule of ``CurlOutcome`` against the one below it, without a network.
@Suite("CurlOutcome")
struct CurlOutcomeTests {
    static let url = URL(string: "http://127.0.0.1:9/path")!
    static let sentURL = URL(string: "http://127.0.0.1:9/path?sent")!

    /// A response head built from raw header lines, as the header callback feeds them.
    static func head(_ lines: [String], ended: Bool = true) -> ResponseHead {
        var head = ResponseHead()
        for line in lines + (ended ? [""] : []) {
            Array((line + "\r\n").utf8).withUnsafeBytes { head.receive($0) }
        }
        return head
    }

    static let okHead = head(["HTTP/1.1 200 OK", "Content-Type: text/plain", "Content-Length: 5"])

    /// A transfer curl finished with `code` after a whole 200, nothing else wrong.
    static func outcome(_ code: CURLcode = CURLE_OK) -> CurlOutcome {
        CurlOutcome(
            ending: .curl(code), url: url, head: okHead, status: 200, headerBytes: 80,
            maxBodyBytes: 100, body: .memory(Data("hello".utf8)), responseURL: sentURL,
            requestHeaders: ["Accept": "*/*"], timings: HTTPTimings(total: 0.5))
    }

    static func failure(_ outcome: CurlOutcome) throws -> HTTPError {
        guard case .failure(let error) = outcome.result else {
            Issue.record("expected an error, got \(outcome.result)")
            throw HTTPError(.network, "no error")
        }
        return error
    }

    static let fileError = HTTPError(.file, "write failed: no space left on device", url: url)

    // MARK: - 1. The loop's own cancellation wins over everything

    @Test func aCancelledTransferIsCancelledWhateverElseWentWrong() throws {
        var outcome = Self.outcome(CURLE_WRITE_ERROR)
        outcome.headerBytes = ResponseHeaderLimit.maxBytes + 1
        outcome.bodyProblem = "the gzip stream is not valid"
        outcome.fileError = Self.fileError
        outcome.overCap = true
        outcome.ending = .cancelled(.byCaller)
        let error = try Self.failure(outcome)
        #expect(error == HTTPError(.cancelled, "the request was cancelled", url: Self.url))
        outcome.ending = .cancelled(.byShutdown)
        #expect(
            try Self.failure(outcome)
                == HTTPError(.cancelled, "the client shut down", url: Self.url))
    }

    @Test func aCancelledTransferNeedsNoOtherFact() throws {
        let error = try Self.failure(CurlOutcome(ending: .cancelled(.byCaller), url: Self.url))
        #expect(error.kind == .cancelled && error.underlyingCode == nil)
    }

    // MARK: - 2. A header block over the limit

    @Test func anOversizedHeaderBlockIsABadResponseBeforeAnyRefusalOrCurlCode() throws {
        var outcome = Self.outcome(CURLE_WRITE_ERROR)
        outcome.headerBytes = ResponseHeaderLimit.maxBytes + 1
        outcome.head = Self.head(["HTTP/1.1 200 OK", "Content-Length: 12abc"], ended: false)
        outcome.bodyProblem = "the gzip stream is not valid"
        outcome.fileError = Self.fileError
        let error = try Self.failure(outcome)
        #expect(error.kind == .badResponse)
        #expect(
            error.message == ResponseHeaderLimit.message(bytes: ResponseHeaderLimit.maxBytes + 1))
        #expect(error.underlyingCode == Int(CURLE_WRITE_ERROR.rawValue))
    }

    @Test func aHeaderBlockAtTheLimitPasses() throws {
        var outcome = Self.outcome()
        outcome.headerBytes = ResponseHeaderLimit.maxBytes
        #expect(try outcome.result.get().status == 200)
    }

    // MARK: - 3. What the callbacks refused, before curl's own code

    @Test func aContentLengthThatFramesNothingWinsOverTheSizeCap() throws {
        // An overflowing length also passes the cap: the framing is the cause.
        var outcome = Self.outcome(CURLE_WRITE_ERROR)
        outcome.head = Self.head(["HTTP/1.1 200 OK", "Content-Length: 99999999999999999999999999"])
        outcome.overCap = true
        outcome.bodyProblem = "the gzip stream is not valid"
        outcome.fileError = Self.fileError
        let error = try Self.failure(outcome)
        #expect(error.kind == .network)
        #expect(error.message.contains("is not a number that fits"), "\(error)")
        #expect(error.underlyingCode == Int(CURLE_WRITE_ERROR.rawValue))
    }

    @Test func aRefusedBodyWinsOverTheFileErrorAndCurlsCode() throws {
        var outcome = Self.outcome(CURLE_WRITE_ERROR)
        outcome.bodyProblem = "the gzip stream is not valid: incorrect header check"
        outcome.fileError = Self.fileError
        outcome.overCap = true
        let error = try Self.failure(outcome)
        #expect(
            error
                == HTTPError(
                    .network, "the gzip stream is not valid: incorrect header check", url: Self.url,
                    underlyingCode: Int(CURLE_WRITE_ERROR.rawValue)))
    }

    @Test func aRefusalStandsEvenWhenCurlCalledTheTransferDone() throws {
        var outcome = Self.outcome()
        outcome.bodyProblem = "the response is encoded as br, which is not decoded"
        #expect(try Self.failure(outcome).underlyingCode == 0)
    }

    // MARK: - 4 to 7. curl failed

    @Test func aFailedFileWriteIsTheErrorWhenCurlFailed() throws {
        var outcome = Self.outcome(CURLE_WRITE_ERROR)
        outcome.fileError = Self.fileError
        outcome.overCap = true
        outcome.sends = 3
        #expect(try Self.failure(outcome) == Self.fileError)
    }

    @Test func aFileErrorIsNotLookedAtWhenCurlSucceeded() throws {
        var outcome = Self.outcome()
        outcome.fileError = Self.fileError
        #expect(try outcome.result.get().status == 200)
    }

    @Test func aThirdSendRefusedIsAConnectionThatClosedUnanswered() throws {
        var outcome = Self.outcome(CURLE_ABORTED_BY_CALLBACK)
        outcome.sends = CurlTransfer.maximumSends + 1
        outcome.overCap = true
        let error = try Self.failure(outcome)
        #expect(error.kind == .network)
        #expect(error.message.contains("not sent a third time"), "\(error)")
        #expect(error.underlyingCode == Int(CURLE_GOT_NOTHING.rawValue))
    }

    @Test func manySendsMatterOnlyWhenTheCallbackAborted() throws {
        var outcome = Self.outcome(CURLE_OPERATION_TIMEDOUT)
        outcome.sends = CurlTransfer.maximumSends + 1
        outcome.curlDetail = "Operation timed out after 100 milliseconds"
        let error = try Self.failure(outcome)
        #expect(error.kind == .timeout)
        #expect(error.message == "Operation timed out after 100 milliseconds")
        // Within the bound, an aborting callback is curl's own cancellation.
        var aborted = Self.outcome(CURLE_ABORTED_BY_CALLBACK)
        aborted.sends = CurlTransfer.maximumSends
        #expect(try Self.failure(aborted).kind == .cancelled)
    }

    @Test func aBodyOverTheCapIsTooLarge() throws {
        var outcome = Self.outcome(CURLE_WRITE_ERROR)
        outcome.overCap = true
        outcome.curlDetail = "Failure writing output to destination"
        #expect(
            try Self.failure(outcome)
                == HTTPError(
                    .bodyTooLarge, "response body larger than 100 bytes", url: Self.url,
                    underlyingCode: Int(CURLE_WRITE_ERROR.rawValue)))
        let filesize = try Self.failure(Self.outcome(CURLE_FILESIZE_EXCEEDED))
        #expect(filesize.kind == .bodyTooLarge && filesize.message.contains("100 bytes"))
    }

    @Test func anOverCapFlagAloneIsNoErrorWhenCurlSucceeded() throws {
        var outcome = Self.outcome()
        outcome.overCap = true
        #expect(try outcome.result.get().status == 200)
    }

    @Test func curlsOwnFailureKeepsItsCodeAndWords() throws {
        var outcome = Self.outcome(CURLE_COULDNT_CONNECT)
        outcome.head = ResponseHead()
        outcome.curlDetail = "Failed to connect to 127.0.0.1 port 9: Connection refused"
        #expect(
            try Self.failure(outcome)
                == HTTPError(
                    .connect, "Failed to connect to 127.0.0.1 port 9: Connection refused",
                    url: Self.url, underlyingCode: 7))
    }

    @Test func withoutCurlsDetailItsGeneralTextIsUsed() throws {
        let error = try Self.failure(Self.outcome(CURLE_COULDNT_RESOLVE_HOST))
        #expect(error.kind == .dns)
        #expect(error.message == String(cString: curl_easy_strerror(CURLE_COULDNT_RESOLVE_HOST)))
    }

    @Test func outOfMemoryIsNamedAsAHeaderLineOverCurlsLimit() throws {
        var outcome = Self.outcome(CURLE_OUT_OF_MEMORY)
        outcome.curlDetail = "Out of memory"
        let error = try Self.failure(outcome)
        #expect(error.kind == .network && error.message == HTTPError.oversizedHeadersMessage)
        #expect(error.underlyingCode == Int(CURLE_OUT_OF_MEMORY.rawValue))
    }

    @Test func curlsFailureWinsOverACutHead() throws {
        var outcome = Self.outcome(CURLE_RECV_ERROR)
        outcome.head = Self.head(["HTTP/1.1 200 OK"], ended: false)
        outcome.unendedCoding = "gzip"
        #expect(try Self.failure(outcome).underlyingCode == Int(CURLE_RECV_ERROR.rawValue))
    }

    // MARK: - 8, 9. curl succeeded, the response is not whole

    @Test func aHeadWithoutItsBlankLineIsCutBeforeAnUnendedStream() throws {
        var outcome = Self.outcome()
        outcome.head = Self.head(["HTTP/1.1 200 OK", "Content-Encoding: gzip"], ended: false)
        outcome.unendedCoding = "gzip"
        #expect(
            try Self.failure(outcome)
                == HTTPError(.network, ResponseFraming.cutHeadMessage, url: Self.url))
    }

    @Test func anInterimResponseDoesNotCompleteTheFinalHead() throws {
        var outcome = Self.outcome()
        outcome.head = Self.head(["HTTP/1.1 100 Continue", "", "HTTP/1.1 200 OK"], ended: false)
        #expect(try Self.failure(outcome).message == ResponseFraming.cutHeadMessage)
    }

    @Test func aCompressedStreamThatDidNotEndIsCut() throws {
        var outcome = Self.outcome()
        outcome.unendedCoding = "deflate"
        #expect(
            try Self.failure(outcome)
                == HTTPError(.network, ResponseFraming.cutStreamMessage("deflate"), url: Self.url))
    }

    // MARK: - 10. The response

    @Test func aWholeResponseCarriesCurlsStatusTheHeadsFieldsAndTheBody() throws {
        var outcome = Self.outcome()
        outcome.status = 201
        let response = try outcome.result.get()
        #expect(response.status == 201, "the status curl read")
        #expect(response.headers["Content-Type"] == "text/plain")
        #expect(response.body == Data("hello".utf8) && response.savedBody == nil)
        #expect(response.url == Self.sentURL)
        #expect(response.requestHeaders["Accept"] == "*/*")
        #expect(response.timings.total == 0.5)
    }

    @Test func aBodySavedToAFileIsReportedNotHeld() throws {
        var outcome = Self.outcome()
        let saved = SavedBody(url: URL(fileURLWithPath: "/tmp/out.bin"), byteCount: 5)
        outcome.body = .file(saved)
        let response = try outcome.result.get()
        #expect(response.body.isEmpty && response.savedBody == saved)
    }

    @Test func aStreamedBodyLeavesTheResponseEmpty() throws {
        var outcome = Self.outcome()
        outcome.body = .stream
        let response = try outcome.result.get()
        #expect(response.body.isEmpty && response.savedBody == nil)
    }
}
