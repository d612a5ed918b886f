import Foundation

/// HTTP Digest authentication (RFC 7616: `SHA-256`, `MD5` and their `-sess` forms, `qop=auth`)
/// over any transport, so both send the same bytes.
///
/// A request goes out unsigned the first time; a 401 with a Digest challenge is answered once
/// with the credentials, and the challenge is kept for the origin, so later requests there are
/// signed at once (with a growing nonce count). A challenge whose nonce went stale is answered
/// with the new nonce. The password itself never leaves: only the digest does, to the origin
/// that asked.
/// ```swift
/// let client = DigestAuthenticatingHTTPClient(wrapping: CurlHTTPClient(), user: "ada", password: secret)
/// ```
public struct DigestAuthenticatingHTTPClient<Wrapped: HTTPClient>: HTTPClient {
    public let wrapped: Wrapped
    private let user: String
    private let password: String
    private let origin: Origin?
    private let challenges = Locked<[Origin: (challenge: DigestChallenge, count: Int)]>([:])

    /// - Parameter origin: when set, only requests to this origin are answered; others pass
    ///   through as they are.
    public init(wrapping wrapped: Wrapped, user: String, password: String, origin: Origin? = nil) {
        self.wrapped = wrapped
        self.user = user
        self.password = password
        self.origin = origin
    }

    public func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
        // No origin (not http(s)): the transport refuses it with its own error.
        guard let target = Origin(request.url) else { return try await wrapped.perform(request) }
        if let origin, target != origin { return try await wrapped.perform(request) }
        let signedAhead = sign(request, for: target)
        // Streamed, a challenge's 401 never reaches the reader: the answered request's does.
        let (first, channel) = (signedAhead ?? request).attempt { status, headers in
            status != 401 || DigestChallenge.best(in: headers) == nil
        }
        let response = try await wrapped.perform(first)
        guard response.status == 401, channel?.reachedReader != true,
            let challenge = DigestChallenge.best(in: response.headers)
        else { return response }
        // Signed with a kept challenge and refused for more than a stale nonce: the
        // credentials are wrong, and saying them again would not help.
        if signedAhead != nil, !challenge.stale { return response }
        challenges.withLock { $0[target] = (challenge, 0) }
        guard let signed = sign(request, for: target) else { return response }
        return try await wrapped.perform(signed)
    }

    /// `request` with an `Authorization` answering the origin's kept challenge, or `nil`.
    private func sign(_ request: HTTPRequest, for target: Origin) -> HTTPRequest? {
        let kept = challenges.withLock { kept -> (DigestChallenge, Int)? in
            guard let entry = kept[target] else { return nil }
            kept[target]?.count += 1
            return (entry.challenge, entry.count + 1)
        }
        guard let (challenge, count) = kept else { return nil }
        var signed = request
        let cnonce = String(UInt64.random(in: .min ... .max), radix: 16)
        signed.headers.replaceOrAdd(
            "Authorization",
            challenge.authorization(
                user: user, password: password, method: request.method.rawValue,
                uri: Self.requestTarget(of: request.url), count: count, cnonce: cnonce))
        signed.secretHeaderNames.insert("authorization")
        return signed
    }

    /// The path and query as they go on the request line.
    static func requestTarget(of url: URL) -> String {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        var target = components?.percentEncodedPath ?? "/"
        if target.isEmpty { target = "/" }
        if let query = components?.percentEncodedQuery { target += "?" + query }
        return target
    }
}
