import Courier
import Testing

@testable import CourierJobs

/// RFC 6901 pointers as `expect.json` resolves them.
@Suite("JSON Pointer")
struct JSONPointerTests {
    @Test func resolution() throws {
        let document = try JSONParser.parse(#"{"a/b": {"m~n": [10, {"x": null}]}, "": 5}"#)
        func value(_ pointer: String) -> String? {
            JSONPointer.resolve(pointer, in: document).map { Expectation.text($0) }
        }
        #expect(value("/a~1b/m~0n/0") == "10")
        #expect(value("/a~1b/m~0n/1/x") == "null")
        #expect(value("/") == "5", "the empty key")
        #expect(value("/a~1b/m~0n/2") == nil)
        #expect(value("/a~1b/m~0n/01") == nil, "no leading zeros")
        #expect(value("/missing") == nil)
        #expect(value("")?.hasPrefix("{") == true, "the whole document")
    }

    @Test("* takes every element of an array, at any depth, in order")
    func wildcard() throws {
        let document = try JSONParser.parse(
            #"{"items": [{"id": 1, "tags": ["a", "b"]}, {"id": "x"}, {"no": 0}], "*": 7}"#)
        func values(_ pointer: String) -> [String] {
            JSONPointer.resolveAll(pointer, in: document).map(\.compactText)
        }
        #expect(values("/items/*/id") == ["1", #""x""#], "missing members give nothing")
        #expect(values("/items/*/tags/*") == [#""a""#, #""b""#])
        #expect(values("/items/1/id") == [#""x""#], "without *, as resolve")
        #expect(values("/*") == ["7"], "on an object, * is an ordinary key")
        #expect(values("/items/*/tags/5").isEmpty)
        #expect(values("").count == 1)
    }

    @Test("a negative index counts from the end; RFC 6901's - never resolves")
    func fromTheEnd() throws {
        let document = try JSONParser.parse(
            #"{"data": [{"id": 1}, {"id": 2}, {"id": 3}], "empty": [], "obj": {"-1": "key"}}"#)
        func value(_ pointer: String) -> String? {
            JSONPointer.resolve(pointer, in: document)?.compactText
        }
        #expect(value("/data/-1/id") == "3")
        #expect(value("/data/-3/id") == "1")
        #expect(value("/data/-4/id") == nil, "before the first")
        #expect(value("/data/-0/id") == nil, "-0 is not an index")
        #expect(value("/data/-/id") == nil, "the element after the last")
        #expect(value("/empty/-1") == nil)
        #expect(value("/obj/-1") == #""key""#, "on an object, an ordinary key")
        #expect(JSONPointer.resolveAll("/data/-1/id", in: document).map(\.compactText) == ["3"])
        #expect(JSONPointer.hasAfterLastToken("/data/-/id"))
        #expect(!JSONPointer.hasAfterLastToken("/data/-1/id"))
        #expect(!JSONPointer.hasAfterLastToken("/a-b"))
    }
}
