/// Entry points for the fuzzers (`make fuzz`, `Sources/courier-fuzz`); not part of the API.
@_spi(Fuzzing) public enum CurlFuzzing {
    /// Hands `data`, split after each line feed, to a response head line by line, as libcurl's
    /// header callback does.
    public static func headerLines(_ data: UnsafeRawBufferPointer) {
        var head = ResponseHead()
        var start = 0
        for index in data.indices where data[index] == 0x0A || index == data.count - 1 {
            head.receive(UnsafeRawBufferPointer(rebasing: data[start...index]))
            start = index + 1
        }
        // What the transport reads back from it.
        _ = head.headers.fields.count + head.status + head.expectedLength
    }
}
