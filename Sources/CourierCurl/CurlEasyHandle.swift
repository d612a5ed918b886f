import CCurl
import Courier
import Foundation

/// A libcurl easy handle with its error buffer, reused across requests.
///
/// `prepare` sets every option a request needs after a `curl_easy_reset`, so nothing leaks from
/// one request to the next; the multi handle keeps the connections, so reuse keeps them alive.
/// A plain GET after a plain GET of the same settings (most of a job's requests) skips the
/// reset and sets only what differs: the URL, the header list and the callbacks' transfer.
final class CurlEasyHandle {
    /// Everything a plain GET's options depend on besides its URL, headers and transfer. A
    /// plain GET has no body, upload or progress callback, is not streamed (a stream pauses
    /// the transfer, and a reset is what surely clears a pause left by a cancelled one), and
    /// may be sent twice, so none of the options those set (method, body, fresh connection,
    /// progress) is on the handle.
    struct PlainGetSettings: Equatable {
        var timeoutMilliseconds: Int
        var connectTimeoutMilliseconds: Int
        var http2: Bool
        var validatesTLS: Bool
        var tls: TLSOptions

        /// The settings of `transfer`, or `nil` when it is not a plain GET.
        init?(_ transfer: CurlTransfer, settings: CurlHTTPClient.Configuration) {
            let request = transfer.request
            guard request.method == .get, request.body == nil, transfer.upload == nil,
                transfer.progress == nil, transfer.channel == nil, request.isRepeatable
            else { return nil }
            timeoutMilliseconds = Int((request.timeout ?? settings.timeout) * 1000)
            connectTimeoutMilliseconds = Int(settings.connectTimeout * 1000)
            http2 = settings.http2
            validatesTLS = request.validatesTLS
            tls = request.tls
        }
    }

    /// The settings the handle was last prepared with in full, when that was a plain GET: a
    /// plain GET with the same ones needs no reset. Cleared by any other request.
    private var preparedPlainGet: PlainGetSettings?
    /// Whether this libcurl took the resend-counting callback (``CurlTransfer/maximumSends``).
    private var countsSends = false

    let raw: UnsafeMutableRawPointer
    private let errorBuffer: UnsafeMutablePointer<CChar>
    /// The header list of the last request, and its lines (each ended by a NUL), kept so that
    /// the next request with the same fields (most of a job's) reuses it: libcurl copies every
    /// line into two allocations of its own. Owned here, freed when the fields change or the
    /// handle goes; libcurl forgets it at each reset.
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private var headerLines: [UInt8] = []
    private var nextHeaderLines: [UInt8] = []

    init?() {
        guard let raw = curl_easy_init() else { return nil }
        self.raw = raw
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    deinit {
        curl_easy_cleanup(raw)
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
    }

    /// curl's own description of the last failure on this handle (`CURLOPT_ERRORBUFFER`),
    /// when it wrote one; ``CurlOutcome`` falls back on `curl_easy_strerror`.
    var errorDetail: String? {
        errorBuffer[0] == 0 ? nil : String(cString: errorBuffer)
    }

    /// Configures the handle for one transfer.
    func prepare(_ transfer: CurlTransfer, settings: CurlHTTPClient.Configuration) {
        let request = transfer.request
        let plainGet = PlainGetSettings(transfer, settings: settings)
        errorBuffer[0] = 0
        if let plainGet, plainGet == preparedPlainGet {
            // The reset and the options after it cost a small request a tenth of its time,
            // and the reset dropped curl's receive buffer, allocated again for every transfer.
            set(CURLOPT_URL, transfer.wire.url.absoluteString)
            setTransferData(Unmanaged.passUnretained(transfer).toOpaque())
            setHeaders(for: transfer.wire, request: request)
            return
        }
        preparedPlainGet = plainGet
        curl_easy_reset(raw)
        set(CURLOPT_ERRORBUFFER, errorBuffer)
        set(CURLOPT_URL, transfer.wire.url.absoluteString)
        // Signals are process-wide and unsafe in a multi-threaded program (libcurl-thread).
        set(CURLOPT_NOSIGNAL, 1)
        // Only http and https, so a URL cannot make us speak file:// or gopher://.
        set(CURLOPT_PROTOCOLS_STR, "http,https")
        // Redirects belong to RedirectingHTTPClient above the transport.
        set(CURLOPT_FOLLOWLOCATION, 0)
        if !request.isRepeatable {
            // libcurl resends a request whose reused connection closed before any answer
            // came; one that may not be sent twice goes out on a fresh connection, where that
            // cannot happen (RFC 9110 §9.2.2; docs/transports.md).
            set(CURLOPT_FRESH_CONNECT, 1)
        }
        set(CURLOPT_TIMEOUT_MS, Int((request.timeout ?? settings.timeout) * 1000))
        set(CURLOPT_CONNECTTIMEOUT_MS, Int(settings.connectTimeout * 1000))
        // No CURLOPT_MAXFILESIZE_LARGE: the header callback stops a transfer whose
        // Content-Length announces more than the cap, and the write callback catches the rest
        // (CurlTransfer.receiveHeaderLine says why). A body going to a file has no cap.
        set(CURLOPT_HTTP_VERSION, settings.http2 ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_1_1)
        if settings.http2 {
            // Wait for a connection that can multiplex rather than open another one.
            set(CURLOPT_PIPEWAIT, 1)
        }
        if !request.validatesTLS {
            set(CURLOPT_SSL_VERIFYPEER, 0)
            set(CURLOPT_SSL_VERIFYHOST, 0)
        }
        setTLSOptions(request.tls)
        // No CURLOPT_ACCEPT_ENCODING: curl hands over the raw body and ContentDecoder decodes
        // gzip, deflate, br and zstd, because libcurl's decoders never check that the stream
        // ended. The Accept-Encoding field comes from WireRequest in the header list.
        // Fewer, larger write callbacks for big bodies (curl's default is 16 KiB). A reset handle
        // keeps its buffer, so setting the same size again does not reallocate it.
        set(CURLOPT_BUFFERSIZE, 64 << 10)
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        _ = ccurl_easy_setopt_data_callback(raw, CURLOPT_WRITEFUNCTION, curlWriteCallback)
        _ = ccurl_easy_setopt_data_callback(raw, CURLOPT_HEADERFUNCTION, curlHeaderCallback)
        // Counts each time curl is about to send the request, to bound its own resends
        // (``CurlTransfer/maximumSends``).
        countsSends = ccurl_easy_setopt_prereq_callback(raw, curlPrereqCallback) == CURLE_OK
        setTransferData(context)
        if transfer.progress != nil {
            set(CURLOPT_NOPROGRESS, 0)
            _ = ccurl_easy_setopt_progress_callback(raw, curlProgressCallback)
            _ = ccurl_easy_setopt_pointer(raw, CURLOPT_XFERINFODATA, context)
        }
        if let upload = transfer.upload {
            setStreamedBody(upload, method: request.method, context: context)
        } else {
            setMethodAndBody(request)
        }
        setHeaders(for: transfer.wire, request: request)
    }

    /// Points the callbacks at the transfer they serve.
    private func setTransferData(_ context: UnsafeMutableRawPointer) {
        _ = ccurl_easy_setopt_pointer(raw, CURLOPT_WRITEDATA, context)
        _ = ccurl_easy_setopt_pointer(raw, CURLOPT_HEADERDATA, context)
        if countsSends { _ = ccurl_easy_setopt_pointer(raw, CURLOPT_PREREQDATA, context) }
    }

    /// The request's ``TLSOptions``. A reset handle has curl's defaults, so only what is set
    /// is applied; curl keeps connections made under other TLS settings apart.
    private func setTLSOptions(_ tls: TLSOptions) {
        guard !tls.isDefault else { return }
        if let bundle = tls.caBundle { set(CURLOPT_CAINFO, bundle.path) }
        if let certificate = tls.clientCertificate { set(CURLOPT_SSLCERT, certificate.path) }
        if let key = tls.clientKey { set(CURLOPT_SSLKEY, key.path) }
        if let passphrase = tls.clientKeyPassphrase { set(CURLOPT_KEYPASSWD, passphrase) }
        if !tls.pinnedPublicKeys.isEmpty {
            set(CURLOPT_PINNEDPUBLICKEY, tls.pinnedPublicKeys.joined(separator: ";"))
        }
        switch tls.minimumVersion {
        case .tls1_2: set(CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_2))
        case .tls1_3: set(CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_3))
        case nil: break
        }
    }

    /// A body curl reads through the read callback, with its length announced up front.
    private func setStreamedBody(
        _ upload: StreamedBodyReader, method: HTTPMethod, context: UnsafeMutableRawPointer
    ) {
        set(CURLOPT_POST, 1)
        _ = ccurl_easy_setopt_off_t(raw, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(upload.length))
        _ = ccurl_easy_setopt_data_callback(raw, CURLOPT_READFUNCTION, curlReadCallback)
        _ = ccurl_easy_setopt_pointer(raw, CURLOPT_READDATA, context)
        _ = ccurl_easy_setopt_seek_callback(raw, curlSeekCallback)
        _ = ccurl_easy_setopt_pointer(raw, CURLOPT_SEEKDATA, context)
        if method != .post { set(CURLOPT_CUSTOMREQUEST, method.rawValue) }
    }

    private func setMethodAndBody(_ request: HTTPRequest) {
        let method = request.method
        if method == .head {
            set(CURLOPT_NOBODY, 1)
        } else if method == .post || (request.body != nil && method != .get) {
            // A GET's empty body is no body (``WireRequest`` refuses any other): sent without
            // `Content-Length: 0`, as URLSession sends it (trial KKK).
            // POSTFIELDS sends the body (and Content-Length, 0 for an empty POST);
            // CUSTOMREQUEST puts the real method on the request line.
            let body = request.body ?? Data()
            _ = ccurl_easy_setopt_off_t(raw, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count))
            body.withUnsafeBytes { bytes in
                // COPYPOSTFIELDS: curl keeps its own copy, so `body` need not outlive the call.
                _ = ccurl_easy_setopt_pointer(
                    raw, CURLOPT_COPYPOSTFIELDS,
                    bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1))
            }
            if method != .post { set(CURLOPT_CUSTOMREQUEST, method.rawValue) }
        } else if method != .get {
            set(CURLOPT_CUSTOMREQUEST, method.rawValue)
        }
    }

    private func setHeaders(for wire: WireRequest, request: HTTPRequest) {
        // The spare buffer is moved out, not copied, so that emptying it keeps its storage.
        var lines: [UInt8] = []
        swap(&lines, &nextHeaderLines)
        lines.removeAll(keepingCapacity: true)
        func append(_ name: String, _ separator: StaticString, _ value: String = "") {
            lines.append(contentsOf: name.utf8)
            lines.append(
                contentsOf: UnsafeBufferPointer(
                    start: separator.utf8Start, count: separator.utf8CodeUnitCount))
            lines.append(contentsOf: value.utf8)
            lines.append(0)
        }
        for field in wire.headers {
            // "Name;" is curl's way to send a header with an empty value.
            if field.value.isEmpty {
                append(field.name, ";")
            } else {
                append(field.name, ": ", field.value)
            }
        }
        if request.body != nil || request.streamedBody != nil || request.method == .post {
            // curl would add a form Content-Type and, for big bodies, wait for 100-continue.
            if !request.headers.contains("Content-Type") { append("Content-Type", ":") }
            if !request.headers.contains("Expect") { append("Expect", ":") }
        }
        if lines != headerLines {
            // WireRequest refused NUL in names and values, so each NUL ends one line.
            curl_slist_free_all(headerList)
            headerList = nil
            let built = lines.withUnsafeBufferPointer { bytes in
                bytes.withMemoryRebound(to: CChar.self) { text -> Bool in
                    var start = 0
                    for (index, byte) in text.enumerated() where byte == 0 {
                        // On failure curl returns nil and leaves the list as it was.
                        guard let longer = curl_slist_append(headerList, text.baseAddress! + start)
                        else { return false }
                        headerList = longer
                        start = index + 1
                    }
                    return true
                }
            }
            if built {
                swap(&headerLines, &lines)
            } else {
                // Out of memory: the list is not kept, so the next request builds it again.
                curl_slist_free_all(headerList)
                headerList = nil
                headerLines.removeAll()
            }
        }
        nextHeaderLines = lines
        if let headerList { _ = ccurl_easy_setopt_pointer(raw, CURLOPT_HTTPHEADER, headerList) }
    }

    private func set(_ option: CURLoption, _ value: Int) {
        _ = ccurl_easy_setopt_long(raw, option, value)
    }

    private func set(_ option: CURLoption, _ value: String) {
        // String options are copied by libcurl (since 7.17), so a temporary is fine.
        _ = value.withCString { ccurl_easy_setopt_pointer(raw, option, $0) }
    }

    private func set(_ option: CURLoption, _ value: UnsafeMutablePointer<CChar>) {
        _ = ccurl_easy_setopt_pointer(raw, option, value)
    }

    /// Reads a duration in microseconds as seconds, or `nil` when curl did not measure it.
    func seconds(_ info: CURLINFO) -> TimeInterval? {
        var value: curl_off_t = 0
        guard ccurl_easy_getinfo_off_t(raw, info, &value) == CURLE_OK, value > 0 else { return nil }
        return TimeInterval(value) / 1_000_000
    }

    /// The phases of the finished transfer, from libcurl's own clock.
    var timings: HTTPTimings {
        HTTPTimings(
            dns: seconds(CURLINFO_NAMELOOKUP_TIME_T),
            connect: seconds(CURLINFO_CONNECT_TIME_T),
            tls: seconds(CURLINFO_APPCONNECT_TIME_T),
            firstByte: seconds(CURLINFO_STARTTRANSFER_TIME_T),
            total: seconds(CURLINFO_TOTAL_TIME_T) ?? 0,
            newConnection: newConnections.map { $0 > 0 })
    }

    /// How many connections this transfer had to open (0 when it reused one).
    private var newConnections: Int? {
        var count = 0
        return ccurl_easy_getinfo_long(raw, CURLINFO_NUM_CONNECTS, &count) == CURLE_OK ? count : nil
    }
}
