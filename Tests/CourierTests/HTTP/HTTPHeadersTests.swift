import Foundation
import Courier
import Testing

@Suite struct HTTPHeadersTests {
    @Test func lookupIgnoresCase() {
        let headers: HTTPHeaders = ["Content-Type": "application/json"]
        #expect(headers["content-type"] == "application/json")
        #expect(headers["CONTENT-TYPE"] == "application/json")
        #expect(headers.contains("Content-type"))
        #expect(headers["Accept"] == nil)
    }

    @Test func namesCompareAsASCIIIgnoringCaseOnly() {
        let headers: HTTPHeaders = ["X-Id[1]": "a", "Ümlaut": "b"]
        #expect(headers["x-id[1]"] == "a")
        // "[" and "{" differ by the same bit as "A" and "a": only letters fold.
        #expect(headers["X-Id{1}"] == nil)
        #expect(headers["X-Id[1"] == nil && headers["X-Id[1]]"] == nil)
        // Not tokens, but compared byte for byte all the same.
        #expect(headers["Ümlaut"] == "b" && headers["ümlaut"] == nil)
        let unnamed: HTTPHeaders = ["": "empty"]
        #expect(unnamed[""] == "empty" && unnamed["a"] == nil)
    }

    @Test func repeatedFieldsAreKeptInOrder() {
        var headers = HTTPHeaders()
        headers.add("Set-Cookie", "a=1")
        headers.add("X-Other", "x")
        headers.add("set-cookie", "b=2")
        #expect(headers.values(for: "SET-COOKIE") == ["a=1", "b=2"])
        #expect(headers.fields.map(\.name) == ["Set-Cookie", "X-Other", "set-cookie"])
    }

    @Test func replaceOrAddKeepsThePlaceOfTheFirstField() {
        var headers: HTTPHeaders = ["A": "1", "B": "2"]
        headers.add("a", "3")
        headers.replaceOrAdd("A", "new")
        #expect(headers.fields.map(\.name) == ["A", "B"])
        #expect(headers.values(for: "a") == ["new"])
    }

    @Test func mergingLetsTheOtherSideWin() {
        let base: HTTPHeaders = ["Accept": "text/plain", "X-Base": "1"]
        let top: HTTPHeaders = ["accept": "application/json", "X-Top": "2"]
        let merged = base.merging(top)
        #expect(merged.values(for: "Accept") == ["application/json"])
        #expect(merged["X-Base"] == "1")
        #expect(merged["X-Top"] == "2")
    }

    @Test func settingNilRemovesEveryField() {
        var headers: HTTPHeaders = ["A": "1"]
        headers.add("a", "2")
        headers["A"] = nil
        #expect(headers.isEmpty)
    }
}

@Suite struct HTTPMethodTests {
    @Test func idempotentMethods() {
        #expect(HTTPMethod.get.isIdempotent)
        #expect(HTTPMethod.put.isIdempotent)
        #expect(HTTPMethod.delete.isIdempotent)
        #expect(!HTTPMethod.post.isIdempotent)
        #expect(!HTTPMethod.patch.isIdempotent)
    }

    @Test func customTokens() {
        #expect(HTTPMethod("PURGE").isValidToken)
        #expect(!HTTPMethod("GET X").isValidToken)
        #expect(!HTTPMethod("").isValidToken)
    }
}

@Suite struct HTTPErrorTests {
    @Test func messagesNeverCarryURLCredentials() {
        let error = HTTPError(
            .connect, "refused", url: URL(string: "http://user:pass@127.0.0.1:1/x")!)
        #expect(error.url?.absoluteString == "http://127.0.0.1:1/x")
        #expect(!error.description.contains("pass"))
    }
}
