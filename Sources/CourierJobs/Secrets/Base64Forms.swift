import Foundation

/// The forms a secret takes inside base64 text, whatever bytes come before and after it: a
/// server that echoes a token base64-encoded in a `Location` (a trial saw a redirect's `state`
/// carry `user:token` so) puts it at any of three alignments.
///
/// For each alignment (0, 1 or 2 bytes before the secret) the form is the run of base64
/// characters that only the secret's bytes decide: the characters that hold bits of the
/// bytes before it or after it are left out, so what is left of a match in the text is at most
/// a few bits of the secret's first and last bytes. Both alphabets are given (`+/` and the
/// URL-safe `-_`), and the secret encoded alone, padding included, so that it is replaced
/// whole.
enum Base64Forms {
    /// The shortest secret whose base64 forms are searched for: a shorter one's forms are a
    /// handful of characters, which ordinary base64 text (an image in a body) holds by chance.
    static let minimumSecretLength = 6
    /// The shortest form kept.
    static let minimumFormLength = 8

    /// The byte patterns of `secret` in base64 text (none for a short secret).
    static func of(_ secret: [UInt8]) -> Set<[UInt8]> {
        guard secret.count >= minimumSecretLength else { return [] }
        var forms = Set<[UInt8]>()
        forms.insert(Array(Data(secret).base64EncodedString().utf8))
        for shift in 0..<3 {
            let bytes = [UInt8](repeating: 0, count: shift) + secret
            let whole = bytes.count / 3 * 3
            var encoded = Array(Data(bytes[..<whole]).base64EncodedString().utf8)
            // A last group of one or two of the secret's bytes decides as many characters.
            let rest = bytes.count - whole
            if rest > 0 {
                let padded = Array(bytes[whole...]) + [UInt8](repeating: 0, count: 3 - rest)
                encoded += Array(Data(padded).base64EncodedString().utf8).prefix(rest)
            }
            // One byte before: two characters hold its bits; two bytes before: three do.
            let form = Array(encoded.dropFirst(shift == 0 ? 0 : shift + 1))
            guard form.count >= minimumFormLength else { continue }
            forms.insert(form)
        }
        for form in forms { forms.insert(urlSafe(form)) }
        return forms
    }

    /// `form` in the URL-safe alphabet, padding as it is.
    private static func urlSafe(_ form: [UInt8]) -> [UInt8] {
        form.map { byte in
            switch byte {
            case UInt8(ascii: "+"): UInt8(ascii: "-")
            case UInt8(ascii: "/"): UInt8(ascii: "_")
            default: byte
            }
        }
    }
}
