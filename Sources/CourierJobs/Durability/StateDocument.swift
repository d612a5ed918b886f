import Courier
import Foundation

/// The JSON documents a job keeps under `outputDir/.courier/`: the conditional validators
/// (`state`), the `since` cursors (`since`) and a records file's commit record (`commit`).
/// Each is one object, the format's `version` first and then the document's own members, and
/// is written and read here alone.
///
/// A document of a later format (a greater `version`) is refused with that reason: a run
/// never half-reads it, and the callers never write over a document they could not read. One
/// without a `version` is read as version 1 (the commit records before this file had none).
enum StateDocument {
    /// The format this Courier writes.
    static let version = 1

    /// Why a document cannot be read.
    struct Unreadable: Error, Equatable {
        let reason: String
        /// Written by a later Courier: never to be written over.
        var isLaterFormat = false
        init(_ reason: String, isLaterFormat: Bool = false) {
            self.reason = reason
            self.isLaterFormat = isLaterFormat
        }
    }

    /// A document's members, in the order written (`version` left out).
    typealias Members = [(key: String, node: JSONNode)]

    /// The bytes of a document: `version`, then `members`.
    static func bytes(_ members: [(String, JSONWriter.Value)]) -> [UInt8] {
        JSONWriter.bytes(.object([("version", .int(version))] + members))
    }

    /// The members of the document `bytes`, its version checked; `kind` names it in reasons
    /// ("not a cursor file courier wrote").
    static func members(of bytes: [UInt8], kind: String) -> Result<Members, Unreadable> {
        guard let root = try? JSONParser.parse(bytes), case .object(let members) = root.value else {
            return .failure(Unreadable("not a \(kind) courier wrote"))
        }
        if let found = members.first(where: { $0.key == "version" }) {
            guard case .number(let number) = found.node.value, let written = Int(exactly: number)
            else { return .failure(Unreadable("not a \(kind) courier wrote")) }
            if written > version {
                return .failure(
                    Unreadable(
                        "a \(kind) of format \(written), written by a later courier (this one reads format \(version))",
                        isLaterFormat: true))
            }
        }
        return .success(members.filter { $0.key != "version" }.map { ($0.key, $0.node) })
    }

    /// The members of the document at `url`: `nil` when there is no file; why not when it
    /// cannot be read (a folder in its place, no permission, not a document of this format).
    static func read(_ url: URL, kind: String, limit: Int? = nil) -> Result<Members, Unreadable>? {
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.read(url, limit: limit)
        } catch {
            if error.code == ENOENT { return nil }
            return .failure(Unreadable("cannot be read (\(String(cString: strerror(error.code))))"))
        }
        return members(of: bytes, kind: kind)
    }
}
