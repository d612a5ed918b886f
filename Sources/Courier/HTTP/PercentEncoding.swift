/// Percent-encoding by byte tables, the one place these rules live: the API layer's URLs and
/// queries (``URLBuilder``), pagination's next-page values and the job runner's templates.
package enum PercentEncoding {
    /// Percent-encodes every byte outside `A-Z a-z 0-9 - . _ ~`.
    package static func unreserved(_ text: String) -> String {
        encode(text, keeping: unreservedTable)
    }

    /// Encodes what may not stand in a query, leaving `&`, `=` and existing escapes alone.
    package static func queryText(_ query: String) -> String {
        escapingStrayPercents(encode(query, keeping: queryAllowed))
    }

    /// Encodes what may not stand in a path, leaving `/` and existing `%XX` escapes alone.
    package static func path(_ path: String) -> String {
        escapingStrayPercents(encode(path, keeping: pathAllowed))
    }

    /// A whole URL's text made valid for `URL(string:)`, changing nothing it means: what no
    /// part of a URL may hold (a space, a quote, a non-ASCII letter) is encoded, and a `%`
    /// that starts no `%XX` escape; reserved characters and escapes stay. Foundation's own
    /// repair of such text encodes every `%` once one character is invalid, so `a%41 b`
    /// would be sent as `a%2541%20b`.
    package static func urlText(_ url: String) -> String {
        escapingStrayPercents(encode(url, keeping: urlAllowed))
    }

    /// A value put in a URL's path as data: its `?` and `#` encoded, which would start a query
    /// or a fragment; `/` and `%XX` kept, for a value that is a path prefix or encoded already.
    package static func dataInPath(_ value: String) -> String {
        value.replacingOccurrences(of: "?", with: "%3F").replacingOccurrences(of: "#", with: "%23")
    }

    /// A value put in a URL's query as data: its `&`, `=`, `+`, `#` and spaces encoded, which
    /// would split it, start another parameter, read as a space or end the query; `%XX` kept,
    /// as in a path.
    package static func dataInQuery(_ value: String) -> String {
        var data = ""
        for character in value {
            switch character {
            case "&": data += "%26"
            case "=": data += "%3D"
            case "+": data += "%2B"
            case "#": data += "%23"
            case " ": data += "%20"
            default: data.append(character)
            }
        }
        return data
    }

    /// UTF-8 bytes outside `allowed` as `%XX` (uppercase hex), as Foundation's
    /// `addingPercentEncoding` does; byte tables because building a `CharacterSet` per call
    /// was most of the cost of building a job's request.
    static func encode(_ text: String, keeping allowed: [Bool]) -> String {
        var text = text
        return text.withUTF8 { bytes -> String in
            guard bytes.contains(where: { !allowed[Int($0)] }) else {
                return String(decoding: bytes, as: UTF8.self)
            }
            var output: [UInt8] = []
            output.reserveCapacity(bytes.count * 3)
            for byte in bytes {
                if allowed[Int(byte)] {
                    output.append(byte)
                } else {
                    output.append(UInt8(ascii: "%"))
                    output.append(hexDigits[Int(byte >> 4)])
                    output.append(hexDigits[Int(byte & 15)])
                }
            }
            return String(decoding: output, as: UTF8.self)
        }
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    private static func table(_ characters: String) -> [Bool] {
        var table = [Bool](repeating: false, count: 256)
        for byte in characters.utf8 { table[Int(byte)] = true }
        return table
    }

    private static let unreservedCharacters =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
    private static let unreservedTable = table(unreservedCharacters)
    /// Foundation's `urlQueryAllowed`, plus `%` (escapes are kept), minus `#`.
    private static let queryAllowed = table(unreservedCharacters + "!$&'()*+,/:;=?@%")
    /// Foundation's `urlPathAllowed` (no `;`), plus `%`, minus `?` and `#`.
    private static let pathAllowed = table(unreservedCharacters + "!$&'()*+,/:=@%")

    /// RFC 3986's unreserved and reserved characters, plus `%` (escapes are kept).
    private static let urlAllowed = table(unreservedCharacters + ":/?#[]@!$&'()*+,;=%")

    /// `%` that does not start a `%XX` escape becomes `%25`: `/sale/50%` is the path
    /// `/sale/50%25`, while `/a%20b` keeps its escape. (URLComponents traps on a bare `%`.)
    static func escapingStrayPercents(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return text }
        let bytes = Array(text.utf8)
        func isHex(_ index: Int) -> Bool {
            guard index < bytes.count else { return false }
            let byte = bytes[index]
            return (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte | 0x20)
        }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + 8)
        for (index, byte) in bytes.enumerated() {
            output.append(byte)
            if byte == UInt8(ascii: "%"), !(isHex(index + 1) && isHex(index + 2)) {
                output.append(contentsOf: Array("25".utf8))
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
