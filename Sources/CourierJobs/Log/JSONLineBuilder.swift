/// Builds one JSON object, field by field, straight into bytes: the request line of the log is
/// written once per attempt, and building a tree of ``JSONWriter/Value``s first cost as much as
/// writing it.
struct JSONLineBuilder {
    private(set) var bytes: [UInt8]
    private var needsComma = false

    init() {
        bytes = [UInt8(ascii: "{")]
        bytes.reserveCapacity(1024)
    }

    /// The finished line.
    mutating func finish() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    mutating func key(_ name: StaticString) {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(
            contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        // Two appends, not an array literal: that would allocate once per key.
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        needsComma = true
    }

    /// Opens a nested object; its fields follow, then ``endObject()``.
    mutating func beginObject(_ name: StaticString) {
        key(name)
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    mutating func string(_ name: StaticString, _ value: String) {
        key(name)
        JSONWriter.writeString(value, to: &bytes)
    }

    mutating func value(_ name: StaticString, _ value: JSONWriter.Value) {
        key(name)
        JSONWriter.write(value, to: &bytes)
    }

    /// An object of string fields (headers), each value possibly replaced.
    mutating func strings(
        _ name: StaticString, _ fields: some Sequence<(String, String)>
    ) {
        key(name)
        bytes.append(UInt8(ascii: "{"))
        var first = true
        for (field, value) in fields {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            JSONWriter.writeString(field, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            JSONWriter.writeString(value, to: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }
}
