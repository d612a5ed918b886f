import Courier
import Foundation
import Testing

@Suite struct FormEncoderTests {
    struct Owner: Encodable { let name: String }

    struct Search: Encodable {
        let text: String
        let tags: [String]
        let page: Int?
        let owner: Owner
        let exact: Bool
    }

    let search = Search(
        text: "a+b & c=d", tags: ["x", "y"], page: nil, owner: Owner(name: "ada"), exact: true)

    func pairs(_ items: [URLQueryItem]) -> [String] {
        items.map { "\($0.name)=\($0.value ?? "<nil>")" }
    }

    @Test func fieldsInCodingOrderWithNestedNamesAndNilLeftOut() throws {
        let items = try FormEncoder().queryItems(from: search)
        #expect(
            pairs(items) == [
                "text=a+b & c=d", "tags[]=x", "tags[]=y", "owner[name]=ada", "exact=true",
            ])
    }

    @Test func formTextIsPercentEncodedAsQueriesAre() throws {
        let text = try FormEncoder().encode(search)
        #expect(
            text
                == "text=a%2Bb%20%26%20c%3Dd&tags%5B%5D=x&tags%5B%5D=y&owner%5Bname%5D=ada&exact=true"
        )
        #expect(text == URLBuilder.encodeQuery(try FormEncoder().queryItems(from: search)))
    }

    @Test(arguments: [
        (FormEncoder.ArrayEncoding.brackets, ["tags[]=x", "tags[]=y"]),
        (.noBrackets, ["tags=x", "tags=y"]),
        (.indexInBrackets, ["tags[0]=x", "tags[1]=y"]),
    ])
    func arrayConventions(_ encoding: FormEncoder.ArrayEncoding, _ expected: [String]) throws {
        struct Tags: Encodable { let tags: [String] }
        let items = try FormEncoder(arrayEncoding: encoding).queryItems(
            from: Tags(tags: ["x", "y"]))
        #expect(pairs(items) == expected)
    }

    @Test func arraysOfObjectsAndNestedArrays() throws {
        struct Body: Encodable {
            let users: [Owner]
            let grid: [[Int]]
        }
        let value = Body(users: [Owner(name: "a"), Owner(name: "b")], grid: [[1, 2], [3]])
        #expect(
            pairs(try FormEncoder(arrayEncoding: .indexInBrackets).queryItems(from: value)) == [
                "users[0][name]=a", "users[1][name]=b", "grid[0][0]=1", "grid[0][1]=2",
                "grid[1][0]=3",
            ])
        #expect(
            pairs(try FormEncoder().queryItems(from: value)) == [
                "users[][name]=a", "users[][name]=b", "grid[][]=1", "grid[][]=2", "grid[][]=3",
            ])
    }

    @Test func nilArrayElementsAreLeftOutAndIndexesKept() throws {
        struct Sparse: Encodable { let values: [Int?] }
        let items = try FormEncoder(arrayEncoding: .indexInBrackets)
            .queryItems(from: Sparse(values: [1, nil, 3]))
        #expect(pairs(items) == ["values[0]=1", "values[2]=3"])
    }

    @Test func boolsAsLiteralsOrNumbers() throws {
        struct Flags: Encodable { let on, off: Bool }
        let flags = Flags(on: true, off: false)
        #expect(pairs(try FormEncoder().queryItems(from: flags)) == ["on=true", "off=false"])
        #expect(
            pairs(try FormEncoder(boolEncoding: .numeric).queryItems(from: flags)) == [
                "on=1", "off=0",
            ])
    }

    @Test func dateStrategies() throws {
        struct When: Encodable { let at: Date }
        let when = When(at: Date(timeIntervalSince1970: 1_738_324_800))
        #expect(pairs(try FormEncoder().queryItems(from: when)) == ["at=2025-01-31T12:00:00Z"])
        #expect(
            pairs(try FormEncoder(dateEncoding: .secondsSince1970).queryItems(from: when)) == [
                "at=1738324800"
            ])
        #expect(
            pairs(try FormEncoder(dateEncoding: .millisecondsSince1970).queryItems(from: when))
                == ["at=1738324800000"])
        let half = When(at: Date(timeIntervalSince1970: 0.5))
        #expect(
            pairs(try FormEncoder(dateEncoding: .secondsSince1970).queryItems(from: half)) == [
                "at=0.5"
            ])
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        #expect(
            pairs(try FormEncoder(dateEncoding: .formatted(formatter)).queryItems(from: when)) == [
                "at=2025-01-31"
            ])
        let custom = FormEncoder(
            dateEncoding: .custom { "day-\(Int($0.timeIntervalSince1970) / 86400)" })
        #expect(pairs(try custom.queryItems(from: when)) == ["at=day-20119"])
    }

    @Test func keyStrategies() throws {
        struct Profile: Encodable {
            let createdAt: Int
            let userID: Int
            let myURLProperty: String
            let plain: String
            let extra: [String: Int]
        }
        let profile = Profile(
            createdAt: 1, userID: 2, myURLProperty: "u", plain: "p", extra: ["keepMe": 3])
        #expect(
            pairs(try FormEncoder(keyEncoding: .convertToSnakeCase).queryItems(from: profile)) == [
                "created_at=1", "user_id=2", "my_url_property=u", "plain=p", "extra[keepMe]=3",
            ])
        #expect(
            pairs(try FormEncoder().queryItems(from: profile)).prefix(2) == [
                "createdAt=1", "userID=2",
            ])
        let upper = FormEncoder(keyEncoding: .custom { $0.uppercased() })
        #expect(pairs(try upper.queryItems(from: Owner(name: "a"))) == ["NAME=a"])
    }

    @Test func dataIsBase64AndURLsAreAbsoluteStrings() throws {
        struct Blob: Encodable {
            let data: Data
            let link: URL
        }
        let blob = Blob(data: Data([0xFF, 0x00, 0x7F]), link: URL(string: "https://a.test/x?y=1")!)
        #expect(
            pairs(try FormEncoder().queryItems(from: blob)) == [
                "data=/wB/", "link=https://a.test/x?y=1",
            ])
    }

    @Test func dictionariesAreSortedSinceTheirOrderIsNot() throws {
        let items = try FormEncoder().queryItems(from: ["b": 2, "a": 1, "c": 3])
        #expect(pairs(items) == ["a=1", "b=2", "c=3"])
    }

    @Test func numbers() throws {
        struct Numbers: Encodable {
            let int: Int
            let negative: Int64
            let double: Double
            let float: Float
            let decimal: Decimal
        }
        let value = Numbers(
            int: 7, negative: -3, double: 1.5, float: 0.25, decimal: Decimal(string: "12.30")!)
        #expect(
            pairs(try FormEncoder().queryItems(from: value)) == [
                "int=7", "negative=-3", "double=1.5", "float=0.25", "decimal=12.3",
            ])
    }

    @Test func aTopLevelNilIsNoFields() throws {
        let nothing: Owner? = nil
        #expect(try FormEncoder().queryItems(from: nothing).isEmpty)
    }

    @Test func aTopLevelScalarOrArrayIsAnInvalidRequest() throws {
        let scalar = try #require(throws: APIError.self) { try FormEncoder().queryItems(from: "x") }
        #expect(scalar.kind == .invalidRequest)
        #expect(scalar.message.contains("top level must be keyed"), "\(scalar.message)")
        let array = try #require(throws: APIError.self) { try FormEncoder().queryItems(from: [1]) }
        #expect(array.kind == .invalidRequest)
    }

    @Test func anEncodingFailureNamesTheKeyPath() throws {
        struct Scores: Encodable { let values: [Double] }
        struct Report: Encodable { let scores: Scores }
        let error = try #require(throws: APIError.self) {
            try FormEncoder().queryItems(from: Report(scores: Scores(values: [1, .nan])))
        }
        #expect(error.kind == .invalidRequest)
        #expect(error.message.contains(#"at "scores.values[1]""#), "\(error.message)")
        #expect(error.message.contains("Report"), "\(error.message)")
    }

    @Test func aThrowingEncodeIsAnInvalidRequestWithItsError() throws {
        struct Refuses: Encodable {
            struct Nope: Error {}
            func encode(to encoder: any Encoder) throws { throw Nope() }
        }
        let error = try #require(throws: APIError.self) {
            try FormEncoder().queryItems(from: Refuses())
        }
        #expect(error.kind == .invalidRequest)
        #expect(error.message.contains("Nope"), "\(error.message)")
    }
}
