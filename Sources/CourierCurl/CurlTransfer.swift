import CCurl
import Courier
import Foundation

/// One request in flight: what was asked, what has arrived, and who waits for it.
///
/// After submission only the event-loop thread touches it (curl calls the callbacks there);
/// `cancelRequested` is the one field other threads write, under the loop's lock.
final class CurlTransfer: @unchecked Sendable {
    let request: HTTPRequest
    let maxBodyBytes: Int
    var continuation: CheckedContinuation<HTTPResponse, any Error>?
    /// Set by the caller's cancellation handler, read by the loop (both under the loop's lock).
    var cancelRequested = false

    var status = 0
    var headers = HTTPHeaders()
    var body = Data()
    var overCap = false
    var headerList: UnsafeMutablePointer<curl_slist>?

    init(request: HTTPRequest, maxBodyBytes: Int) {
        self.request = request
        self.maxBodyBytes = maxBodyBytes
    }

    deinit {
        curl_slist_free_all(headerList)
    }

    /// Resumes the caller once; later calls do nothing.
    func finish(_ result: Result<HTTPResponse, HTTPError>) {
        guard let continuation else { return }
        self.continuation = nil
        continuation.resume(with: result.mapError { $0 as any Error })
    }

    /// Appends body bytes; returns false when they would pass the size cap.
    func receive(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard body.count + bytes.count <= maxBodyBytes else {
            overCap = true
            return false
        }
        body.append(contentsOf: bytes)
        return true
    }

    /// Takes one raw header line. A status line starts a new response, so that only the final
    /// response's fields are kept (after `100 Continue`, for instance).
    func receiveHeaderLine(_ bytes: UnsafeRawBufferPointer) {
        // Trim CR LF as bytes: as Characters, "\r\n" is one grapheme and matches neither.
        var end = bytes.count
        while end > 0, bytes[end - 1] == 0x0A || bytes[end - 1] == 0x0D { end -= 1 }
        let line = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[..<end]), as: UTF8.self)
        if line.hasPrefix("HTTP/") {
            headers = HTTPHeaders()
            let parts = line.split(separator: " ", maxSplits: 2)
            status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
        } else if let first = line.first, first == " " || first == "\t", !headers.isEmpty {
            // An obsolete folded continuation line belongs to the previous field.
            var fields = headers.fields
            fields[fields.count - 1].value += " " + line.trimmingCharacters(in: .whitespaces)
            headers = HTTPHeaders(fields)
        } else if let colon = line.firstIndex(of: ":") {
            let name = String(line[..<colon])
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers.add(name, value)
        }
    }
}

/// CURLOPT_WRITEFUNCTION: body bytes for the transfer in `context`.
let curlWriteCallback: ccurl_data_callback = { data, size, count, context in
    guard let data, let context else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    // Returning less than `length` makes curl abort the transfer with CURLE_WRITE_ERROR.
    return transfer.receive(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
}

/// CURLOPT_HEADERFUNCTION: one header line at a time, status lines included.
let curlHeaderCallback: ccurl_data_callback = { data, size, count, context in
    guard let data, let context else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    transfer.receiveHeaderLine(UnsafeRawBufferPointer(start: data, count: length))
    return length
}
