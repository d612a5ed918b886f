@testable import Courier
import Testing

/// `Content-Length` values: the plain-digits fast path and the list parsing agree on every
/// value either could take.
@Suite struct ResponseFramingTests {
    @Test(
        "values that frame a body",
        arguments: [
            "0", "75", "123456789012345678", "9223372036854775807", "0009", "12, 12", "7,7",
            "5 ,\t5",
        ])
    func framing(value: String) {
        #expect(ResponseFraming.contentLengthProblem(value) == nil, "\(value)")
    }

    @Test(
        "values that do not",
        arguments: [
            "", " ", "9223372036854775808", "99999999999999999999", "-1", "+5", "1a", "1 2",
            "12, 13", "12,", ",12", "0x10", "١٢",
        ])
    func notFraming(value: String) {
        let problem = ResponseFraming.contentLengthProblem(value)
        #expect(problem?.contains("is not a number that fits") == true, "\(value)")
    }
}
