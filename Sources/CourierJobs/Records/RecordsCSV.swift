import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A records file's CSV beside it (`records.csv`): `users.jsonl` → `users.csv`, remade whole
/// from the JSON lines whenever they changed, so that every disposition (append, replace,
/// merge) gives the CSV the file's records and nothing else.
///
/// RFC 4180: a header row of the column names, one row per record, CRLF line ends, a field in
/// double quotes when it holds a comma, a quote, a CR or an LF (its quotes doubled). A column
/// is a top-level member of the record: a string as its text, a number as written, `true` or
/// `false`, an empty field for `null` or a missing member, an object or array as compact JSON.
enum RecordsCSV {
    /// The CSV's path beside the records file `path` (its extension replaced by `.csv`).
    static func path(for path: String) -> String {
        let name = (path as NSString).lastPathComponent
        let folder = String(path.dropLast(name.utf8.count))
        let stem = name.hasSuffix(".jsonl") ? String(name.dropLast(6)) : name
        return folder + stem + ".csv"
    }

    /// Whether the CSV of `records` must be made again: it is missing, or older than the
    /// records file (a run killed between the two left it behind).
    static func isStale(_ csv: URL, of records: URL) -> Bool {
        var csvStatus = stat()
        var recordsStatus = stat()
        guard stat(records.path, &recordsStatus) == 0 else { return false }
        guard stat(csv.path, &csvStatus) == 0 else { return true }
        let csvTime = Double(csvStatus.st_mtim.tv_sec) + Double(csvStatus.st_mtim.tv_nsec) / 1e9
        let recordsTime =
            Double(recordsStatus.st_mtim.tv_sec) + Double(recordsStatus.st_mtim.tv_nsec) / 1e9
        return csvTime < recordsTime
    }

    /// Writes the CSV of the records file `records` to `csv` (a temporary renamed into place,
    /// `fsync`ed; its folder left to the caller to sync). Blocking.
    static func write(
        _ csv: URL, from records: URL, columns: [String], tag: String?
    ) throws(FileError) {
        var output = AppendingTemporary?.none
        do {
            output = try AppendingTemporary(replacing: csv, tag: tag)
            var buffer: [UInt8] = []
            buffer.reserveCapacity(1 << 16)
            row(columns.map { Array($0.utf8) }, into: &buffer)
            try eachLine(of: records) { (line: ArraySlice<UInt8>) throws(FileError) in
                guard let record = try? JSONParser.parse(Array(line)) else { return }
                row(columns.map { field(record, $0) }, into: &buffer)
                if buffer.count >= 1 << 16 {
                    try output?.append(buffer)
                    buffer.removeAll(keepingCapacity: true)
                }
            }
            try output?.append(buffer)
            try output?.commit()
        } catch {
            output?.discard()
            throw error
        }
    }

    /// One column of a record, as the field's bytes before quoting.
    static func field(_ record: JSONNode, _ column: String) -> [UInt8] {
        guard case .object(let members) = record.value,
            let node = members.last(where: { $0.key == column })?.node
        else { return [] }
        switch node.value {
        case .null: return []
        case .string(let text): return Array(text.utf8)
        case .bool(let flag): return Array((flag ? "true" : "false").utf8)
        case .number: return Array((node.numberSource ?? "").utf8)
        case .array, .object:
            var bytes: [UInt8] = []
            JSONWriter.write(node, to: &bytes)
            return bytes
        }
    }

    /// Appends one row: the fields, quoted where RFC 4180 asks, then CRLF.
    static func row(_ fields: [[UInt8]], into output: inout [UInt8]) {
        for (index, field) in fields.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            let quoted = field.contains { $0 == 0x2C || $0 == 0x22 || $0 == 0x0D || $0 == 0x0A }
            guard quoted else {
                output.append(contentsOf: field)
                continue
            }
            output.append(0x22)
            for byte in field {
                if byte == 0x22 { output.append(0x22) }
                output.append(byte)
            }
            output.append(0x22)
        }
        output.append(contentsOf: [0x0D, 0x0A])
    }

    /// Calls `body` with each line of `file` (without its line end), read in chunks.
    private static func eachLine(
        of file: URL, _ body: (ArraySlice<UInt8>) throws(FileError) -> Void
    ) throws(FileError) {
        let descriptor = open(file.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileError(path: file.path, action: "read", code: errno) }
        defer { close(descriptor) }
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw FileError(path: file.path, action: "read", code: errno)
            }
            if count == 0 { break }
            pending.append(contentsOf: chunk[..<count])
            var start = pending.startIndex
            while let end = pending[start...].firstIndex(of: 0x0A) {
                try body(pending[start..<end])
                start = end + 1
            }
            pending.removeSubrange(..<start)
        }
        if !pending.isEmpty { try body(pending[...]) }
    }
}
