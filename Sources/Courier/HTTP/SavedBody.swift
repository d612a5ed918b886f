import Foundation

/// A response body that went to a file instead of memory.
public struct SavedBody: Sendable, Hashable {
    /// The file holding the body.
    public var url: URL
    /// How many bytes of body the file holds (after content decoding).
    public var byteCount: Int

    public init(url: URL, byteCount: Int) {
        self.url = url
        self.byteCount = byteCount
    }
}
