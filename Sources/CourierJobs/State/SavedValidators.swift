import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the conditional state keeps for one saved output: the validators its last `200` sent,
/// and the saved file as it was then.
///
/// The file's stamp is what lets a changed file be repaired: one overwritten by hand, restored
/// from elsewhere or cut short by a full disk was kept for ever while the server answered
/// `304` to its validators (trial J). A file whose stamp differs is fetched whole instead.
struct SavedValidators: Sendable, Hashable {
    var validators: HTTPValidators
    /// The saved file's stamp when the validators were recorded (`nil` in states written
    /// before it was kept: then the file's presence alone is checked, as it was).
    var file: FileStamp?
    /// For a paginated task's first page: how many pages the listing had when it was last
    /// fetched whole, each saved; a page file gone since is fetched again with the rest.
    var pages: Int?
    /// For the same listing: the stamps of its pages 2 and on, in order, so that a later page
    /// changed in place (cut short, edited) is fetched again too (trial N).
    var laterPages: [FileStamp]?
    /// Whether the entry has a file's stamp, a page count or later pages' stamps that do not
    /// read (a hand edit: `"size": "abc"`). Such an entry is not trusted: its output is
    /// fetched whole, as a changed file is. Read as an older state's entry, it was checked for
    /// presence only, and a changed file was kept behind `304`s (trial M).
    var unreadable = false

    /// The document's (or a journal line's) fields for this entry, after its `save`.
    var fields: [(String, JSONWriter.Value)] {
        var fields: [(String, JSONWriter.Value)] = []
        if let etag = validators.etag { fields.append(("etag", .string(etag))) }
        if let date = validators.lastModified { fields.append(("lastModified", .string(date))) }
        // Kept unreadable until the output is fetched again (a stamp no file has: a state
        // written back must not turn it into an older state's entry, trusted by presence).
        guard !unreadable else {
            return fields + [("size", .int(-1)), ("modified", .string(""))]
        }
        if let file { fields += file.fields }
        if let pages { fields.append(("pages", .int(pages))) }
        if let laterPages {
            fields.append(("laterPages", .array(laterPages.map { .object($0.fields) })))
        }
        return fields
    }

    /// An entry from its fields; members it does not know are left alone.
    init(fields: [(key: String, node: JSONNode)]) {
        var validators = HTTPValidators()
        var pages: Int?
        var laterPages: [FileStamp]?
        var unreadable = false
        for field in fields {
            switch (field.key, field.node.value) {
            case ("etag", .string(let text)): validators.etag = text
            case ("lastModified", .string(let text)): validators.lastModified = text
            case ("pages", .number(let number)) where number >= 1 && number < 1e9:
                pages = Int(number)
            case ("laterPages", .array(let stamps)):
                let read = stamps.compactMap { node -> FileStamp? in
                    guard case .object(let members) = node.value else { return nil }
                    return FileStamp(fields: members)
                }
                laterPages = read.count == stamps.count ? read : nil
                unreadable = unreadable || laterPages == nil
            case ("pages", _), ("laterPages", _): unreadable = true
            default: break
            }
        }
        self.validators = validators
        file = FileStamp(fields: fields)
        self.pages = pages
        self.laterPages = laterPages
        let stamped = fields.contains { $0.key == "size" || $0.key == "modified" }
        self.unreadable = unreadable || (stamped && file == nil)
    }

    init(validators: HTTPValidators, file: FileStamp?) {
        self.validators = validators
        self.file = file
    }
}

/// A file's size and modification time, to the nanosecond: enough to tell it was changed
/// since (a `touch` alone also counts, and costs one whole fetch).
struct FileStamp: Sendable, Hashable {
    var size: Int
    /// `seconds.nanoseconds`, exact: a JSON number would round nanoseconds away.
    var modified: String

    init(size: Int, modified: String) {
        self.size = size
        self.modified = modified
    }

    /// A stamp as the state writes it (`{"size", "modified"}`); `nil` when it is not one.
    init?(fields: [(key: String, node: JSONNode)]) {
        var size: Int?
        var modified: String?
        for field in fields {
            switch (field.key, field.node.value) {
            case ("size", .number(let number)) where number >= 0 && number < 9e15:
                size = Int(number)
            case ("modified", .string(let text)): modified = text
            default: break
            }
        }
        guard let size, let modified else { return nil }
        self.init(size: size, modified: modified)
    }

    /// The state's fields for it.
    var fields: [(String, JSONWriter.Value)] {
        [("size", .int(size)), ("modified", .string(modified))]
    }

    /// The stamp of the regular file at `path`; `nil` when there is none there.
    static func of(_ path: String) -> FileStamp? {
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        #if canImport(Darwin)
            let time = status.st_mtimespec
        #else
            let time = status.st_mtim
        #endif
        let nanoseconds = String(time.tv_nsec)
        return FileStamp(
            size: Int(status.st_size),
            modified: "\(time.tv_sec)."
                + String(repeating: "0", count: max(0, 9 - nanoseconds.count)) + nanoseconds)
    }
}
