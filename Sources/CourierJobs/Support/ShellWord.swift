/// A path or value as one shell word, for the commands courier prints for the user to run:
/// as it is when it holds only characters no shell treats specially, else in single quotes.
enum ShellWord {
    static func quoted(_ text: String) -> String {
        let plain =
            !text.isEmpty
            && text.unicodeScalars.allSatisfy { scalar in
                scalar.isASCII
                    && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                        || "/._-+,:@=%".unicodeScalars.contains(scalar))
            }
        return plain ? text : singleQuoted(text)
    }

    /// `text` in single quotes, whatever it holds.
    static func singleQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }
}
