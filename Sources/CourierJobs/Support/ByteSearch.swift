extension String {
    /// Whether this text's UTF-8 bytes hold `part`'s, as they are sent and written.
    ///
    /// With Foundation imported, `contains(_:)` compares the two as Unicode text through
    /// `NSString`: for every header and task id of every task of a job with secrets, 2 to 4 %
    /// of a run's time (`SecretMarking`, `SecretInTaskID`). What a secret is found in is bytes
    /// (the redactor compares bytes too), so a byte search is also the right question.
    func holdsBytes(of part: String) -> Bool {
        var text = self
        var part = part
        return text.withUTF8 { haystack in
            part.withUTF8 { needle in
                guard let first = needle.first, needle.count <= haystack.count else {
                    return needle.isEmpty
                }
                for start in 0...(haystack.count - needle.count)
                where haystack[start] == first
                    && haystack[start..<start + needle.count].elementsEqual(needle)
                {
                    return true
                }
                return false
            }
        }
    }
}
