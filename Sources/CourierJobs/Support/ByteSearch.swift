/// Finding bytes in bytes: the redactor's search for secrets, and the checks that ask whether a
/// header or a task id holds one.
enum ByteSearch {
    /// Where `needle` first starts in `haystack[from..<to]`, or `nil`.
    static func firstIndex<Haystack: RandomAccessCollection, Needle: RandomAccessCollection>(
        of needle: Needle, in haystack: Haystack, from: Int, to: Int
    ) -> Int? where Haystack.Element == UInt8, Haystack.Index == Int, Needle.Element == UInt8 {
        guard let first = needle.first else { return from }
        guard needle.count <= to - from else { return nil }
        for start in from...(to - needle.count)
        where haystack[start] == first
            && haystack[start..<start + needle.count].elementsEqual(needle)
        {
            return start
        }
        return nil
    }
}

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
                ByteSearch.firstIndex(of: needle, in: haystack, from: 0, to: haystack.count) != nil
            }
        }
    }
}
