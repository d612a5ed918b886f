import Foundation

/// What a job file's bytes must be before they are read as JSON: UTF-8, and free of the one
/// character courier reserves.
extension JobDecoder {
    /// The line and column (in bytes) of the first byte that is not valid UTF-8, if any.
    static func invalidUTF8(in data: Data) -> (Int, Int)? {
        let bytes = [UInt8](data)
        if String(validating: bytes, as: UTF8.self) != nil { return nil }
        // Find the first bad sequence by decoding scalar by scalar.
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var offset = 0
        var line = 1
        var lineStart = 0
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar):
                offset += String(scalar).utf8.count
                if scalar == "\n" {
                    line += 1
                    lineStart = offset
                }
            case .emptyInput:
                return nil
            case .error:
                return (line, offset - lineStart + 1)
            }
        }
    }

    /// Where U+E000 (``Template/environmentBrace``) first stands in the file, as a character
    /// or as the JSON escape `\ue000`: the line and column (in bytes), if anywhere.
    static func reservedCharacter(in data: Data) -> (Int, Int)? {
        let bytes = [UInt8](data)
        var line = 1
        var lineStart = 0
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x0A {
                line += 1
                lineStart = index + 1
            } else if byte == 0xEE, index + 2 < bytes.count, bytes[index + 1] == 0x80,
                bytes[index + 2] == 0x80
            {
                return (line, index - lineStart + 1)
            } else if byte == UInt8(ascii: "\\"), index + 5 < bytes.count,
                bytes[index + 1] == UInt8(ascii: "u"),
                String(decoding: bytes[(index + 2)...(index + 5)], as: UTF8.self).lowercased()
                    == "e000"
            {
                return (line, index - lineStart + 1)
            } else if byte == UInt8(ascii: "\\") {
                index += 1  // an escaped character is not the start of another escape
            }
            index += 1
        }
        return nil
    }
}
