import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A bare HTTP/1.1 exchange with a test server on 127.0.0.1, over a socket of its own: how the
/// tests read and change the fixture servers' bookkeeping.
///
/// Not URLSession: FoundationNetworking runs every session of a process on one work queue, and
/// a test that floods it (an endless body, a huge header block) held a bookkeeping request
/// there past its 5 s deadline, so a test far from the flood failed ("the fixture took the
/// record set", CI's hostile pass). One request a connection (`Connection: close`), read to
/// the end; loopback only.
public enum LoopbackHTTP {
    /// What a request came back with.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Sends `method url` with `body` and returns the status and body. Blocks: call it from a
    /// thread of its own (``ProbeClient`` does).
    public static func exchange(
        _ method: String, _ url: URL, body: Data = Data(),
        headers: [(String, String)] = [], timeout: TimeInterval = 120
    ) throws -> (status: Int, body: Data) {
        guard let host = url.host, ["127.0.0.1", "localhost"].contains(host), let port = url.port
        else { throw Failure(description: "not a loopback URL with a port: \(url)") }
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        defer { close(descriptor) }
        var limit = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(
            descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(
            descriptor, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw Failure(description: "connect \(url): errno \(errno)") }
        var target = url.path.isEmpty ? "/" : url.path
        if let query = url.query { target += "?" + query }
        var head = "\(method) \(target) HTTP/1.1\r\nHost: \(host):\(port)\r\n"
        head += "Connection: close\r\nContent-Length: \(body.count)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        var request = Data((head + "\r\n").utf8)
        request.append(body)
        try request.withUnsafeBytes { bytes in
            var sent = 0
            while sent < bytes.count {
                let count = send(descriptor, bytes.baseAddress! + sent, bytes.count - sent, 0)
                guard count > 0 else { throw Failure(description: "send: errno \(errno)") }
                sent += count
            }
        }
        var response = Data()
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count == 0 { break }
            guard count > 0 else { throw Failure(description: "recv \(url): errno \(errno)") }
            response.append(contentsOf: buffer[0..<count])
        }
        guard let end = response.range(of: Data("\r\n\r\n".utf8)) else {
            throw Failure(description: "no response head from \(url)")
        }
        let statusLine =
            String(decoding: response[..<end.lowerBound], as: UTF8.self)
            .split(separator: "\r\n").first ?? ""
        let parts = statusLine.split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else {
            throw Failure(description: "a bad status line from \(url): \(statusLine)")
        }
        // The fixture servers send Content-Length and close: the body is what follows the head.
        // Servers written elsewhere (the Pushgateway) may send it in chunks.
        let body = Data(response[end.upperBound...])
        let chunked = String(decoding: response[..<end.lowerBound], as: UTF8.self).lowercased()
            .contains("\r\ntransfer-encoding: chunked")
        return (status, chunked ? try dechunk(body, url: url) : body)
    }

    /// A chunked body's data: each chunk's size in hex, its bytes, until the chunk of size 0.
    private static func dechunk(_ body: Data, url: URL) throws -> Data {
        var data = Data()
        var rest = body[...]
        while let line = rest.range(of: Data("\r\n".utf8)) {
            let sizeText = String(decoding: rest[..<line.lowerBound], as: UTF8.self)
            guard let size = Int(sizeText.split(separator: ";").first ?? "", radix: 16),
                rest.distance(from: line.upperBound, to: rest.endIndex) >= size
            else { throw Failure(description: "a bad chunk from \(url): \(sizeText)") }
            if size == 0 { return data }
            let start = line.upperBound
            let stop = rest.index(start, offsetBy: size)
            data.append(rest[start..<stop])
            rest = rest[stop...].dropFirst(2)
        }
        throw Failure(description: "a chunked body from \(url) without its last chunk")
    }

    /// ``exchange(_:_:body:headers:timeout:)`` on a thread of its own, never blocking a thread
    /// of the cooperative pool.
    public static func exchangeOffPool(
        _ method: String, _ url: URL, body: Data = Data(), headers: [(String, String)] = []
    ) async throws -> (status: Int, body: Data) {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(
                    with: Result { try exchange(method, url, body: body, headers: headers) })
            }
        }
    }
}
