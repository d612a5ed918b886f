import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `foreach` and `zip`: the variables a task expands over.
extension TaskDecoder {
    mutating func readForeach() -> (foreach: [(name: String, source: ForeachSource)], zip: Bool) {
        let foreach =
            reader.take("foreach").map {
                Self.decodeForeach(
                    $0, path: "\(path).foreach", folder: defaults.jobFolder, context: context)
            } ?? []
        variables = Set(foreach.map(\.name))
        let zipNode = reader.take("zip")
        let zip = reader.bool("zip") ?? false
        if !Self.countFits(foreach, zip: zip) {
            context.error(
                "\(path).foreach",
                "expands to more than 9223372036854775807 tasks (the product of its variables); no run can go through them",
                at: node)
        }
        if zip, foreach.count < 2, let zipNode {
            reader.fail("zip", "needs at least two foreach variables to pair up", at: zipNode)
        }
        return (foreach, zip)
    }

    static func decodeForeach(
        _ node: JSONNode, path: String, folder: URL, context: DecodingContext
    ) -> [(name: String, source: ForeachSource)] {
        guard case .object(let members) = node.value, !members.isEmpty else {
            // `{}` is an object, but of no variable (trial FFF: "expected an object of
            // variables, found an object").
            var found = node.value.typeName
            if case .object = node.value { found = "an empty object" }
            context.error(
                path,
                "expected an object of at least one variable, like {\"n\": {\"range\": [1, 3]}}, found \(found)",
                at: node)
            return []
        }
        var result: [(name: String, source: ForeachSource)] = []
        for member in members {
            let memberPath = "\(path).\(member.key)"
            guard Template.isIdentifier(Array(member.key.utf8)[...]) else {
                context.error(
                    memberPath,
                    "variable names are letters, digits and '_', not starting with a digit",
                    at: member.node)
                continue
            }
            if let source = foreachSource(
                member.node, path: memberPath, folder: folder, context: context)
            {
                result.append((member.key, source))
            }
        }
        return result
    }

    /// One variable's values: a list, or an object naming a range, a lines file or a capture.
    private static func foreachSource(
        _ node: JSONNode, path: String, folder: URL, context: DecodingContext
    ) -> ForeachSource? {
        switch node.value {
        case .array(let values):
            // No value makes no task, as `"tasks": []` is refused (trial EEE: 0 tasks, ok).
            if values.isEmpty {
                context.error(path, "expected at least one value, found []", at: node)
            }
            var list: [String] = []
            for (index, value) in values.enumerated() {
                switch value.value {
                case .string(let text): list.append(text)
                case .number: list.append(value.numberSource ?? "")
                default:
                    context.error(
                        "\(path)[\(index)]",
                        "expected a string or number, found \(value.value.typeName)", at: value)
                }
            }
            return .list(list)
        case .object(let members):
            guard
                var reader = NodeReader(
                    node, path: path, keys: JobKeys.foreachSource, context: context)
            else { return nil }
            // An object of no known key is one mistake, said once (trial FFF: `{"list": []}`
            // got "expected a list of values" and "unknown key" both).
            if !members.isEmpty, !["range", "lines", "capture"].contains(where: reader.has) {
                if let list = members.first(where: { $0.key == "list" })?.node {
                    let name = path.split(separator: ".").last.map(String.init) ?? "name"
                    context.error(
                        "\(path).list",
                        "is not a key: a list of values is the variable's array itself (\"\(name)\": [\"a\", \"b\"]); the other forms are {\"range\": [from, to]}, {\"lines\": \"file\"} and {\"capture\": \"name\"}",
                        at: list)
                } else {
                    reader.rejectUnknownKeys()
                }
                return .list([])
            }
            let source = sourceObject(&reader, folder: folder)
            reader.rejectUnknownKeys()
            // A bad source still declares its variable, so its uses are not errors too.
            return source ?? .list([])
        default:
            context.error(
                path,
                "expected a list of values, {\"range\": [from, to]} or {\"lines\": \"file\"}, found \(node.value.typeName)",
                at: node)
            return nil
        }
    }

    /// `{"range": …}`, `{"capture": …}` or `{"lines": …}`, the first found in that order.
    private static func sourceObject(_ reader: inout NodeReader, folder: URL) -> ForeachSource? {
        let path = reader.path
        let context = reader.context
        if let range = reader.take("range") {
            return rangeSource(range, path: "\(path).range", context: context)
        } else if let captureNode = reader.take("capture") {
            if case .string(let name) = captureNode.value,
                Template.isIdentifier(Array(name.utf8)[...])
            {
                return .capture(name)
            }
            context.error(
                "\(path).capture",
                "expected the name of another task's capture, found \(reader.describe(captureNode))",
                at: captureNode)
        } else if let linesNode = reader.take("lines") {
            return linesSource(linesNode, path: "\(path).lines", folder: folder, context: context)
        } else {
            context.error(
                path,
                "expected a list of values ([\"a\", \"b\"]), {\"range\": [from, to]}, {\"lines\": \"file\"} or {\"capture\": \"name\"}",
                at: reader.node)
        }
        return nil
    }

    /// `[from, to]`. Bounds are read from their source text: a Double cannot hold 2^63 - 1.
    private static func rangeSource(_ range: JSONNode, path: String, context: DecodingContext)
        -> ForeachSource?
    {
        if case .array(let bounds) = range.value, bounds.count == 2,
            let low = wholeNumber(bounds[0]), let high = wholeNumber(bounds[1]), low <= high
        {
            if high.subtractingReportingOverflow(low).overflow
                || (high - low).addingReportingOverflow(1).overflow
            {
                context.error(
                    path, "holds more than 9223372036854775807 values; no run can go through them",
                    at: range)
            }
            return .range(low, high)
        } else if case .array(let bounds) = range.value, bounds.count == 2,
            bounds.allSatisfy({ if case .number = $0.value { true } else { false } }),
            bounds.contains(where: { wholeNumber($0) == nil })
        {
            context.error(
                path,
                "expected whole numbers from -9223372036854775808 to 9223372036854775807, found \(bounds.map { $0.numberSource ?? "?" }.joined(separator: " and "))",
                at: range)
        } else {
            context.error(path, "expected [from, to]: two whole numbers with from ≤ to", at: range)
        }
        return nil
    }

    /// A file of lines, relative to the job file's folder.
    private static func linesSource(
        _ linesNode: JSONNode, path: String, folder: URL, context: DecodingContext
    ) -> ForeachSource? {
        guard case .string(let name) = linesNode.value else {
            context.error(
                path, "expected a file name, found \(linesNode.value.typeName)", at: linesNode)
            return nil
        }
        let url = URL(fileURLWithPath: name, relativeTo: folder)
        if let problem = linesFileProblem(url) {
            context.error(path, "\"\(name)\" \(problem)", at: linesNode)
        } else if FileManager.default.isReadableFile(atPath: url.path) {
            if let (line, nul) = firstNonUTF8Line(url) {
                context.error(
                    path,
                    nul
                        ? "\"\(name)\" holds a NUL byte (line \(line)), which no value may"
                        : "\"\(name)\" is not UTF-8 text (line \(line)); convert it (iconv -t UTF-8)",
                    at: linesNode)
                return nil
            }
            return .lines(url)
        } else {
            context.error(
                path, "cannot read \"\(name)\" (looked at \(url.path))", at: linesNode)
        }
        return nil
    }

    /// Why `url` cannot be a file of lines: a folder reads as nothing (a run of 0 tasks that
    /// looks fine), a device such as /dev/zero never ends, and a FIFO is read more than once
    /// (validating, planning and running it; trial EEE: `validate` waited on one for ever).
    static func linesFileProblem(_ url: URL) -> String? {
        var status = stat()
        guard stat(url.path, &status) == 0 else { return nil }
        switch status.st_mode & S_IFMT {
        case S_IFDIR: return "is a folder, not a file of lines"
        case S_IFCHR, S_IFBLK: return "is a device, not a file of lines"
        case S_IFSOCK: return "is a socket, not a file of lines"
        case S_IFIFO: return "is a FIFO, not a file of lines (write the lines to a file)"
        default: return nil
        }
    }

    /// The number of the first line of `url` that is not UTF-8 text (or holds a NUL: `nul`),
    /// or `nil`: its bytes would go out as U+FFFD replacement characters, and two lines that
    /// differ only in their non-UTF-8 bytes would make one task id (trial FFF: a Latin-1 file
    /// read as "duplicate task id"). Streamed, 64 KiB at a time.
    static func firstNonUTF8Line(_ url: URL) -> (line: Int, nul: Bool)? {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return nil }
        defer { try? handle.close() }
        var bytes = FileBytes(handle: handle)
        var parser = Unicode.UTF8.ForwardParser()
        var line = 1
        while true {
            switch parser.parseScalar(from: &bytes) {
            case .valid(let scalar):
                guard scalar.count == 1, let byte = scalar.first else { continue }
                if byte == 0x0A { line += 1 }
                // A NUL is UTF-8, but no value may hold one (trial III: an id held it).
                if byte == 0 { return (line, true) }
            case .error: return (line, false)
            case .emptyInput: return nil
            }
        }
    }

    /// A file's bytes, one at a time, read in chunks.
    private struct FileBytes: IteratorProtocol {
        let handle: FileHandle
        var chunk: [UInt8] = []
        var index = 0

        mutating func next() -> UInt8? {
            if index == chunk.count {
                guard let data = try? handle.read(upToCount: 64 << 10), !data.isEmpty else {
                    return nil
                }
                chunk = Array(data)
                index = 0
            }
            defer { index += 1 }
            return chunk[index]
        }
    }

    /// Whether the task count fits an `Int`: the product of the variables' sizes, or with
    /// `zip` (values taken together) each size alone. Lines files, whose size is unknown here,
    /// count as one.
    static func countFits(_ foreach: [(name: String, source: ForeachSource)], zip: Bool) -> Bool {
        var count = 1
        for variable in foreach {
            let size: Int
            switch variable.source {
            case .list(let values): size = max(1, values.count)
            case .range(let from, let to):
                let (span, overflow) = to.subtractingReportingOverflow(from)
                guard !overflow, span < Int.max else { return false }
                size = span + 1
            case .lines, .capture: size = 1
            }
            guard !zip else { continue }
            let (product, overflow) = count.multipliedReportingOverflow(by: size)
            guard !overflow else { return false }
            count = product
        }
        return true
    }

    /// A JSON number as a whole `Int`, from its source text (`12`, `-3`, `1e3`), or `nil` when
    /// it is not whole or does not fit.
    static func wholeNumber(_ node: JSONNode) -> Int? {
        guard case .number(let value) = node.value else { return nil }
        if let text = node.numberSource, let exact = Int(text) { return exact }
        // Exponent forms (`1e3`): through the Double, where it is exact.
        guard abs(value) < 9.2e18, let exact = Int(exactly: value) else { return nil }
        return exact
    }
}
