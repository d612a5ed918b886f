import Foundation

/// A response body as text, decoded by the `charset` of its `Content-Type`.
///
/// UTF-8 is the default (no `Content-Type`, no `charset`, or `charset=utf-8`) and costs what
/// it did before: one `String(decoding:as:)`. Other labels follow the WHATWG Encoding
/// Standard, which is what browsers do with what servers send:
/// - `iso-8859-1`, `latin1`, `us-ascii`, `ascii` and `windows-1252` are all read as
///   windows-1252 (a superset of the other two; servers that say Latin-1 often send 1252's
///   curly quotes and euro sign, and bytes a server called ASCII that are not are shown as
///   what they most likely are rather than lost);
/// - `utf-16` is little-endian unless a byte-order mark says otherwise; `utf-16le` and
///   `utf-16be` as named (a leading byte-order mark is dropped); an odd last byte is U+FFFD;
/// - a few more labels go to Foundation (`iso-8859-2`, `windows-1250`, `windows-1251`,
///   `shift_jis`, `euc-jp`, `utf-32`…);
/// - anything else, or bytes Foundation cannot convert, falls back to UTF-8, invalid bytes
///   replaced with U+FFFD: text with a few wrong characters beats an error for a `String`.
enum ResponseText {
    /// The body of `response` as text.
    static func decode(_ response: HTTPResponse) -> String {
        decode(response.body, contentType: response.headers["Content-Type"])
    }

    /// `body` as text, by the charset of `contentType`.
    static func decode(_ body: Data, contentType: String?) -> String {
        // The common case first, without parsing: no charset at all.
        guard let contentType, contentType.utf8.contains(UInt8(ascii: "=")),
            let charset = MediaType(contentType)?.charset
        else { return String(decoding: body, as: UTF8.self) }
        switch charset {
        case "utf-8", "utf8", "unicode-1-1-utf-8":
            return String(decoding: body, as: UTF8.self)
        case "iso-8859-1", "iso8859-1", "latin1", "l1", "iso_8859-1", "us-ascii", "ascii",
            "windows-1252", "cp1252", "x-cp1252":
            return windows1252(body)
        case "utf-16", "utf-16le", "unicode", "ucs-2":
            return utf16(body, bigEndian: false)
        case "utf-16be":
            return utf16(body, bigEndian: true)
        default:
            if let encoding = foundationEncodings[charset],
                let text = String(data: body, encoding: encoding)
            {
                return text
            }
            return String(decoding: body, as: UTF8.self)
        }
    }

    /// Every byte is one code point: 0x80–0x9F by windows-1252's table, the rest as Latin-1.
    static func windows1252(_ body: Data) -> String {
        var scalars = String.UnicodeScalarView()
        scalars.reserveCapacity(body.count)
        for byte in body {
            let value = (0x80...0x9F).contains(byte) ? cp1252High[Int(byte - 0x80)] : UInt32(byte)
            scalars.append(Unicode.Scalar(value) ?? "\u{FFFD}")
        }
        return String(scalars)
    }

    /// UTF-16 in the given byte order, unless a byte-order mark names the other one.
    static func utf16(_ body: Data, bigEndian: Bool) -> String {
        var bytes = body[...]
        var bigEndian = bigEndian
        if bytes.starts(with: [0xFE, 0xFF]) {
            bigEndian = true
            bytes = bytes.dropFirst(2)
        } else if bytes.starts(with: [0xFF, 0xFE]) {
            bigEndian = false
            bytes = bytes.dropFirst(2)
        }
        var units: [UInt16] = []
        units.reserveCapacity(bytes.count / 2)
        var index = bytes.startIndex
        while index + 1 < bytes.endIndex {
            let first = UInt16(bytes[index])
            let second = UInt16(bytes[index + 1])
            units.append(bigEndian ? first << 8 | second : second << 8 | first)
            index += 2
        }
        var text = String(decoding: units, as: UTF16.self)
        if index < bytes.endIndex { text.append("\u{FFFD}") }
        return text
    }

    /// windows-1252's 0x80–0x9F; the five bytes it leaves undefined map to the C1 controls
    /// of the same value, as in the WHATWG index.
    private static let cp1252High: [UInt32] = [
        0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
        0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
        0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
        0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
    ]

    /// Labels Foundation converts; lowercased, as ``MediaType/charset`` gives them.
    private static let foundationEncodings: [String: String.Encoding] = [
        "iso-8859-2": .isoLatin2, "latin2": .isoLatin2,
        "windows-1250": .windowsCP1250, "windows-1251": .windowsCP1251,
        "windows-1253": .windowsCP1253, "windows-1254": .windowsCP1254,
        "shift_jis": .shiftJIS, "sjis": .shiftJIS, "euc-jp": .japaneseEUC,
        "iso-2022-jp": .iso2022JP,
        "utf-32": .utf32, "utf-32le": .utf32LittleEndian, "utf-32be": .utf32BigEndian,
    ]
}
