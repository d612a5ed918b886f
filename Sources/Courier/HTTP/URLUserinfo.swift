import Foundation

extension URL {
    /// Whether the URL could carry `user:password@`: userinfo needs an "@", most URLs have
    /// none, and then they need not be parsed again to find out (a look-up on every request).
    var mayCarryUserinfo: Bool {
        absoluteString.utf8.contains(UInt8(ascii: "@"))
    }
}
