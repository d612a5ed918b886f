import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Streams the lines of run logs, one file after another, reading 256 KiB at a time: a log of
/// any size is never held whole. `-` is standard input.
///
/// A line that is not a log line (garbage, or the truncated last line a killed run leaves) is
/// skipped with one warning naming the file and line, and reading goes on. A file that cannot
/// be opened is a warning too: the other files are still read.
struct LogReader: Sequence {
    /// A line and where it came from.
    struct Entry {
        var file: String
        var number: Int
        var line: LogLine
    }

    let paths: [String]
    let warn: (String) -> Void
    /// Whether lines keep their `responseHeaders` (the exports read them; `report` does not).
    var responseHeaders = false

    func makeIterator() -> Iterator {
        Iterator(paths: paths, warn: warn, responseHeaders: responseHeaders)
    }

    struct Iterator: IteratorProtocol {
        private var paths: ArraySlice<String>
        private let warn: (String) -> Void
        /// The open file; closed when the iterator is dropped, read to the end or not.
        private var current: OpenFile?
        private var descriptor: Int32 { current?.descriptor ?? -1 }
        private var file = ""
        private var number = 0
        private var buffer: [UInt8] = []
        private var offset = 0
        /// Where the search for the next newline goes on from: a long line is searched once,
        /// not again from its start with each chunk read (trial GG: quadratic).
        private var searched = 0
        /// Whether the line being read is over ``longestLine``, its bytes dropped as they come.
        private var skipping = false
        private var atEnd = true
        /// The lines of the open file that were not log lines: the first few are said one by
        /// one, the rest counted when the file ends (trial EEE: a records file read as a log
        /// printed a warning a line, 200,001 of them).
        private var notLogLines = 0
        static let notLogLinesSaid = 3
        private var chunk = [UInt8](repeating: 0, count: 256 << 10)
        private let responseHeaders: Bool

        init(paths: [String], warn: @escaping (String) -> Void, responseHeaders: Bool = false) {
            self.paths = paths[...]
            self.warn = warn
            self.responseHeaders = responseHeaders
        }

        mutating func next() -> Entry? {
            while true {
                if atEnd {
                    guard openNext() else { return nil }
                }
                guard let (bytes, complete) = nextRawLine() else {
                    closeCurrent()
                    continue
                }
                number += 1
                if complete == nil {
                    warn(
                        "\(file):\(number): a line longer than \(Self.longestLine >> 20) MiB, not a courier log line; skipped"
                    )
                    continue
                }
                if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) { continue }
                if let line = LogLine(bytes: bytes, responseHeaders: responseHeaders) {
                    return Entry(file: file, number: number, line: line)
                }
                if complete == false {
                    warn(
                        "\(file):\(number): the last line is incomplete (was the run killed?); skipped"
                    )
                    continue
                }
                notLogLines += 1
                if notLogLines <= Self.notLogLinesSaid {
                    warn("\(file):\(number): not a courier log line; skipped")
                }
            }
        }

        /// The longest line read: a courier log line is far shorter (bodies and headers in it
        /// are capped). A 2 GiB file of one line (a sparse file, `/dev/zero`) had its reader
        /// hold it all, and search it again with each chunk (trial GG).
        static let longestLine = 64 << 20

        /// The next line's bytes without its newline, and whether a newline ended it (`nil`: the
        /// line was longer than ``longestLine``, and is dropped).
        private mutating func nextRawLine() -> (ArraySlice<UInt8>, Bool?)? {
            while true {
                if let newline = Self.newline(in: buffer, from: Swift.max(offset, searched)) {
                    let line = buffer[offset..<newline]
                    offset = newline + 1
                    searched = offset
                    if skipping {
                        skipping = false
                        return ([], nil)
                    }
                    return (line, true)
                }
                searched = buffer.count - offset
                buffer.removeFirst(offset)
                offset = 0
                if buffer.count > Self.longestLine {
                    skipping = true
                    buffer.removeAll(keepingCapacity: true)
                    searched = 0
                }
                let descriptor = self.descriptor
                let count = chunk.withUnsafeMutableBytes { POSIX.read(descriptor, $0) }
                if count < 0, errno == EINTR { continue }
                if count <= 0 {
                    if count < 0 {
                        warn("\(file): cannot read: \(String(cString: strerror(errno)))")
                    }
                    if skipping {
                        (skipping, buffer, searched) = (false, [], 0)
                        return ([], nil)
                    }
                    guard !buffer.isEmpty else { return nil }
                    let rest = buffer[...]
                    (buffer, searched) = ([], 0)
                    return (rest, false)
                }
                buffer.append(contentsOf: chunk[0..<count])
            }
        }

        /// The index of the next `\n` at or after `start` (memchr: this runs for every line).
        private static func newline(in buffer: [UInt8], from start: Int) -> Int? {
            guard start < buffer.count else { return nil }
            return buffer.withUnsafeBufferPointer { pointer -> Int? in
                guard let base = pointer.baseAddress,
                    let found = memchr(base + start, 0x0A, pointer.count - start)
                else { return nil }
                return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            }
        }

        private mutating func openNext() -> Bool {
            while let path = paths.popFirst() {
                file = path == "-" ? "(stdin)" : path
                number = 0
                buffer = []
                (offset, searched, skipping) = (0, 0, false)
                switch LogReader.openLog(path) {
                case .failure(let problem):
                    warn("\(file): \(problem.reason)")
                    continue
                case .success(let opened):
                    current = opened
                }
                atEnd = false
                return true
            }
            return false
        }

        private mutating func closeCurrent() {
            let more = notLogLines - Self.notLogLinesSaid
            if more > 0 {
                warn(
                    "\(file): \(more) more line\(more == 1 ? "" : "s") not courier log lines; skipped"
                )
            }
            notLogLines = 0
            current = nil
            atEnd = true
        }
    }
}

extension LogReader {
    /// Why a log file could not be opened.
    struct Unopenable: Error {
        var reason: String
    }

    /// Why each of `paths` cannot be read as a log (missing, unreadable, a folder), each as
    /// `path: reason`; empty when all can be opened. `-` (standard input) always can.
    static func problems(_ paths: [String]) -> [String] {
        paths.compactMap { path in
            guard case .failure(let problem) = openLog(path) else { return nil }
            return "\(path): \(problem.reason)"
        }
    }

    /// `path` opened for reading, or why it cannot be read as a log.
    fileprivate static func openLog(_ path: String) -> Result<OpenFile, Unopenable> {
        let opened = path == "-" ? dup(0) : open(path, O_RDONLY | O_CLOEXEC)
        guard opened >= 0 else {
            return .failure(Unopenable(reason: "cannot read: \(String(cString: strerror(errno)))"))
        }
        let file = OpenFile(descriptor: opened)
        var status = stat()
        if fstat(opened, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
            return .failure(Unopenable(reason: "is a folder, not a log file"))
        }
        // `/dev/zero` never ends (trial GG); standard input and pipes are read as they come.
        let kind = status.st_mode & S_IFMT
        if path != "-", kind == S_IFCHR || kind == S_IFBLK {
            return .failure(Unopenable(reason: "is a device, not a log file"))
        }
        return .success(file)
    }
}

/// A file descriptor closed with its last reference.
private final class OpenFile {
    let descriptor: Int32
    init(descriptor: Int32) { self.descriptor = descriptor }
    deinit { close(descriptor) }
}
