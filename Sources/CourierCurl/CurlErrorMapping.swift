import CCurl
import Courier

/// Maps a `CURLcode` onto the shared ``HTTPError`` kinds, keeping the code itself.
enum CurlErrorMapping {
    static func kind(of code: CURLcode) -> HTTPError.Kind {
        switch code {
        case CURLE_URL_MALFORMAT: .invalidURL
        // The request's scheme was checked before sending (``WireRequest``), so libcurl's
        // "unsupported protocol" here is the reply: a status line it cannot read, or HTTP/0.9.
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_WEIRD_SERVER_REPLY: .badResponse
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: .dns
        case CURLE_COULDNT_CONNECT: .connect
        case CURLE_OPERATION_TIMEDOUT: .timeout
        case CURLE_FILESIZE_EXCEEDED: .bodyTooLarge
        case CURLE_TOO_MANY_REDIRECTS: .tooManyRedirects
        case CURLE_ABORTED_BY_CALLBACK: .cancelled
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM,
            CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR,
            CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_ENGINE_NOTFOUND,
            CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_CRL_BADFILE, CURLE_SSL_SHUTDOWN_FAILED,
            CURLE_USE_SSL_FAILED:
            .tls
        default: .network
        }
    }
}
