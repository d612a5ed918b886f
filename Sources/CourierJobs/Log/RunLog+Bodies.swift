import Courier
import Foundation

/// The bodies a request line speaks of, measured or read where they are.
extension RunLog {
    /// A response's body as the run has it: in memory, or in the file it was saved to (or
    /// is being written to, for an attempt that is retried).
    static func body(of response: HTTPResponse, savedTo: String?) -> Data {
        guard let file = savedTo ?? response.savedBody?.url.path else { return response.body }
        return FileManager.default.contents(atPath: file) ?? Data()
    }

    /// The bytes of a streamed body: its data parts and its files' sizes now.
    static func size(_ body: StreamedBody) -> Int {
        body.parts.reduce(0) { total, part in
            switch part {
            case .data(let data): return total + data.count
            case .file(let url):
                let size =
                    (try? FileManager.default.attributesOfItem(atPath: url.path)[.size]) as? Int
                return total + (size ?? 0)
            }
        }
    }
}
