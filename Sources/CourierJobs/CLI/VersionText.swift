import CBuildInfo
import Courier
import CourierCurl

/// `courier --version`: courier's version, the commit it was built from, and what the linked
/// libcurl can do (HTTP/2, content decoding and TLS depend on how it was built).
enum VersionText {
    /// The commit `make` embedded, or `unknown` after a plain `swift build`.
    static var commit: String {
        cbuildinfo_commit().map { String(cString: $0) } ?? "unknown"
    }

    static var lines: [String] {
        ["courier \(CourierVersion.current)", "commit \(commit)"]
            + CurlLibrary.linked.description
    }
}
