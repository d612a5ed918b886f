import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A paginated task's records part while its pages come: `KEY.RUN.listing` in the records
/// file's folder of parts (``RecordsStore``), renamed to `KEY.RUN.part` when the task ends
/// `ok`. Until the task's first checkpoint it is a tagged temporary, which the next run sweeps
/// should this one be killed; from then on it has its name, which the ``ListingCheckpoint``
/// gives, and `--resume` goes on from the records it holds instead of from page 1.
///
/// It starts with the part's header line; a resumed task's starts with the records of the
/// pages the earlier run kept, copied from that run's listing file (which stays until this
/// one's first checkpoint names the new file).
struct RecordsListingFile {
    /// The listing file's name, which a checkpoint gives it.
    let url: URL
    private let partURL: URL
    /// Until the task's first checkpoint, the lines go to a tagged temporary beside `url`: a
    /// run killed before it leaves a temporary, which the next run sweeps (``StaleTemporaries``).
    private var temporary: AppendingTemporary?
    /// After it, to `url`, opened for appending.
    private var descriptor: Int32 = -1
    /// Bytes written so far.
    private(set) var size = 0
    /// The FNV-1a hash of the records written so far (the bytes after the header line): a
    /// checkpoint keeps it, and a resume copies the records only when they still hash to it.
    private(set) var recordsHash = FNV1a.hash([UInt8]())
    private var inHeader = true

    static func name(key: String, run: String) -> String { "\(key).\(run).listing" }

    /// Makes the file's temporary and writes `header`. Blocking.
    init(folder: URL, key: String, run: String, header: [UInt8], tag: String?)
        throws(FileError)
    {
        url = folder.appendingPathComponent(Self.name(key: key, run: run))
        partURL = folder.appendingPathComponent("\(key).\(run).part")
        temporary = try AppendingTemporary(replacing: url, tag: tag)
        try append(header)
        inHeader = false
    }

    /// Appends `bytes` whole.
    mutating func append(_ bytes: [UInt8]) throws(FileError) {
        if let temporary {
            try temporary.append(bytes)
        } else if let code = bytes.withUnsafeBytes({ POSIX.writeAll(descriptor, $0) }) {
            throw FileError(path: url.path, action: "write", code: code)
        }
        size += bytes.count
        if !inHeader { recordsHash = FNV1a.hash(bytes, into: recordsHash) }
    }

    /// The records of the listing file `url`, up to its `length`th byte (after its header
    /// line): their hash and how many lines they are; `nil` when it cannot be read that far.
    /// Blocking.
    static func digest(of url: URL, length: Int) -> (hash: UInt64, lines: Int)? {
        var hash = FNV1a.hash([UInt8]())
        var lines = 0
        let read = eachRecordsPiece(of: url, length: length) { piece in
            hash = FNV1a.hash(piece, into: hash)
            lines += piece.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
        }
        return read == nil ? (hash, lines) : nil
    }

    /// Hands `body` the bytes of the listing file `url` after its header line, up to its
    /// `length`th byte, in pieces of at most 1 MiB; the error, if it could not read them.
    private static func eachRecordsPiece(
        of url: URL, length: Int, _ body: (ArraySlice<UInt8>) throws(FileError) -> Void
    ) -> FileError? {
        var source = open(url.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard source >= 0 else { return FileError(path: url.path, action: "open", code: errno) }
        defer { POSIX.close(&source) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var left = length
        var inHeader = true
        while left > 0 {
            let wanted = min(left, buffer.count)
            let count = buffer.withUnsafeMutableBytes { [source] in
                POSIX.read(source, UnsafeMutableRawBufferPointer(rebasing: $0[..<wanted]))
            }
            guard count > 0 else {
                return FileError(path: url.path, action: "read", code: count < 0 ? errno : EIO)
            }
            left -= count
            var piece = buffer[..<count]
            if inHeader {
                guard let newline = piece.firstIndex(of: UInt8(ascii: "\n")) else { continue }
                piece = piece[(newline + 1)...]
                inHeader = false
            }
            do {
                try body(piece)
            } catch {
                return error
            }
        }
        return nil
    }

    /// Appends the records of an earlier listing file: its first `length` bytes after its
    /// header line, in pieces of 1 MiB. Blocking.
    mutating func append(recordsOf earlier: URL, length: Int) throws(FileError) {
        var copy = self
        if let error = Self.eachRecordsPiece(
            of: earlier, length: length,
            { piece throws(FileError) in
                try copy.append(Array(piece))
            })
        {
            throw error
        }
        self = copy
    }

    /// Makes the bytes written so far durable under the listing's name (the first time, the
    /// temporary `fsync`ed, renamed to it and its folder `fsync`ed); returns how many there
    /// are. Blocking.
    mutating func sync() throws(FileError) -> Int {
        if var temporary {
            try temporary.commit(syncingFolder: true)
            self.temporary = nil
            descriptor = open(url.path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW)
            guard descriptor >= 0 else {
                throw FileError(path: url.path, action: "open", code: errno)
            }
        } else if fsync(descriptor) != 0 {
            throw FileError(path: url.path, action: "sync", code: errno)
        }
        return size
    }

    /// Puts the part in place: `fsync`ed and renamed to `KEY.RUN.part`; its folder is left for
    /// the caller to sync (``FolderSyncs``). Blocking.
    mutating func commit() throws(FileError) {
        if var temporary {
            try temporary.commit()
            self.temporary = nil
        } else {
            if fsync(descriptor) != 0 {
                throw FileError(path: url.path, action: "sync", code: errno)
            }
            POSIX.close(&descriptor)
        }
        guard rename(url.path, partURL.path) == 0 else {
            throw FileError(path: partURL.path, action: "rename", code: errno)
        }
    }

    /// Closes the file, and removes it unless a checkpoint names it (`keep`). Blocking.
    mutating func close(keeping keep: Bool) {
        if var temporary {
            temporary.discard()
            self.temporary = nil
            return
        }
        POSIX.close(&descriptor)
        if !keep { unlink(url.path) }
    }
}
