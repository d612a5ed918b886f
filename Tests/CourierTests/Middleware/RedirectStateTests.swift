import Courier
import Foundation
import Testing

@Suite struct RedirectStateTests {
    let origin = URL(string: "http://127.0.0.1:8080/start")!

    func redirect(_ status: Int, to location: String, from url: URL? = nil) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Location": location], url: url ?? origin)
    }

    @Test func nonRedirectsEndTheChain() throws {
        var state = RedirectState(request: HTTPRequest(url: origin), maxHops: 3)
        #expect(try state.next(after: HTTPResponse(status: 200, url: origin)) == nil)
        #expect(try state.next(after: HTTPResponse(status: 304, url: origin)) == nil)
        #expect(try state.next(after: HTTPResponse(status: 302, url: origin)) == nil, "no Location")
    }

    @Test func relativeLocationsResolveAgainstTheCurrentURL() throws {
        var state = RedirectState(request: HTTPRequest(url: origin), maxHops: 3)
        let next = try #require(try state.next(after: redirect(302, to: "next?a=1")))
        #expect(next.url.absoluteString == "http://127.0.0.1:8080/next?a=1")
        #expect(state.hops == 1)
    }

    /// A body marked secret (a password) is never carried to another origin by a 307/308; a
    /// 302/303 drops the body anyway, and the same origin keeps it.
    @Test func aSecretBodyIsRefusedAcrossOriginsOn307And308() throws {
        var request = HTTPRequest(url: origin, method: .post, body: Data("pw=hunter22".utf8))
        request.bodyIsSecret = true
        for status in [307, 308] {
            var state = RedirectState(request: request, maxHops: 3)
            #expect(throws: HTTPError.self) {
                try state.next(after: redirect(status, to: "http://localhost:8080/x"))
            }
            var same = RedirectState(request: request, maxHops: 3)
            let kept = try #require(try same.next(after: redirect(status, to: "/other")))
            #expect(kept.body == request.body, "same origin: the body goes on")
        }
        var state = RedirectState(request: request, maxHops: 3)
        let rewritten = try #require(
            try state.next(after: redirect(302, to: "http://localhost:8080/x")))
        #expect(rewritten.method == .get && rewritten.body == nil)
    }

    @Test func crossOriginDropsSecretsOnHostSchemeOrPortChange() throws {
        for target in [
            "http://localhost:8080/x", "https://127.0.0.1:8080/x", "http://127.0.0.1:9090/x",
        ] {
            let request = HTTPRequest(
                url: origin,
                headers: [
                    "Authorization": "Bearer t", "Proxy-Authorization": "p", "Cookie": "c",
                    "X-Api-Key": "k", "Accept": "json",
                ], secretHeaderNames: ["x-api-key"])
            var state = RedirectState(request: request, maxHops: 3)
            let next = try #require(try state.next(after: redirect(307, to: target)))
            #expect(next.headers.names == ["accept"], "for \(target)")
        }
    }

    @Test func sameOriginKeepsSecrets() throws {
        let request = HTTPRequest(url: origin, headers: ["Authorization": "Bearer t"])
        var state = RedirectState(request: request, maxHops: 3)
        let next = try #require(try state.next(after: redirect(302, to: "http://127.0.0.1:8080/y")))
        #expect(next.headers["Authorization"] == "Bearer t")
    }

    @Test func defaultPortsCountAsTheSameOrigin() throws {
        let request = HTTPRequest(
            url: URL(string: "http://example.test/a")!, headers: ["Authorization": "x"])
        var state = RedirectState(request: request, maxHops: 3)
        let next = try #require(
            try state.next(after: redirect(302, to: "http://example.test:80/b")))
        #expect(next.headers["Authorization"] == "x")
    }

    @Test func secretsStayDroppedAfterReturningToTheOrigin() throws {
        let request = HTTPRequest(url: origin, headers: ["Authorization": "Bearer t"])
        var state = RedirectState(request: request, maxHops: 5)
        _ = try state.next(after: redirect(302, to: "http://localhost:1/away"))
        let back = try #require(
            try state.next(after: redirect(302, to: origin.absoluteString + "?back")))
        #expect(back.headers["Authorization"] == nil)
    }

    @Test func methodRewriteRules() throws {
        let cases: [(Int, HTTPMethod, HTTPMethod, Bool)] = [
            (301, .post, .get, false), (302, .post, .get, false), (303, .post, .get, false),
            (303, .put, .get, false), (303, .head, .head, true), (302, .put, .put, true),
            (307, .post, .post, true), (308, .post, .post, true),
        ]
        for (status, method, expected, keepsBody) in cases {
            let request = HTTPRequest(
                url: origin, method: method, headers: ["Content-Type": "text/plain"],
                body: Data("b".utf8))
            var state = RedirectState(request: request, maxHops: 3)
            let next = try #require(try state.next(after: redirect(status, to: "/next")))
            #expect(next.method == expected, "\(status) \(method)")
            #expect((next.body != nil) == keepsBody, "\(status) \(method)")
            #expect(next.headers.contains("Content-Type") == keepsBody, "\(status) \(method)")
        }
    }

    @Test func hopLimit() throws {
        var state = RedirectState(request: HTTPRequest(url: origin), maxHops: 2)
        _ = try state.next(after: redirect(302, to: "/1"))
        _ = try state.next(after: redirect(302, to: "/2"))
        let error = try #require(throws: HTTPError.self) {
            try state.next(after: redirect(302, to: "/3"))
        }
        #expect(error.kind == .tooManyRedirects)
    }

    @Test func loopsAreDetectedBeforeTheHopLimit() throws {
        var state = RedirectState(request: HTTPRequest(url: origin), maxHops: 50)
        _ = try state.next(after: redirect(302, to: "/b"))
        let error = try #require(throws: HTTPError.self) {
            try state.next(after: redirect(302, to: "/start"))
        }
        #expect(error.kind == .tooManyRedirects)
        #expect(error.message.contains("loop"))
    }

    @Test func onlyHTTPAndHTTPS() throws {
        var state = RedirectState(request: HTTPRequest(url: origin), maxHops: 3)
        let error = try #require(throws: HTTPError.self) {
            try state.next(after: redirect(302, to: "file:///etc/passwd"))
        }
        #expect(error.kind == .invalidURL)
    }

    // MARK: - A changed hop (a handler's): the rules judge the request sent

    /// The proposal with its URL changed, as a handler would.
    func moved(_ request: HTTPRequest, to url: String) -> HTTPRequest {
        var moved = request
        moved.url = URL(string: url)!
        return moved
    }

    @Test func theNextLocationResolvesAgainstTheTakenURL() throws {
        var state = RedirectState(request: HTTPRequest(url: origin), maxHops: 3)
        let proposed = try #require(try state.proposal(after: redirect(302, to: "/a")))
        #expect(state.hops == 0, "a proposal is not a hop")
        let taken = try state.take(
            moved(proposed, to: "http://localhost:9090/b"), proposed: proposed)
        #expect(state.current == taken)
        #expect(state.hops == 1)
        let next = try #require(try state.next(after: redirect(302, to: "c?d=1", from: taken.url)))
        #expect(next.url.absoluteString == "http://localhost:9090/c?d=1")
    }

    @Test func aTakenRequestSentBeforeIsALoop() throws {
        var state = RedirectState(request: HTTPRequest(url: origin), maxHops: 50)
        let proposed = try #require(try state.proposal(after: redirect(302, to: "/new")))
        let error = try #require(throws: HTTPError.self) {
            try state.take(moved(proposed, to: origin.absoluteString), proposed: proposed)
        }
        #expect(error.kind == .tooManyRedirects)
        #expect(error.message.contains("loop"))
    }

    @Test func aTakenRequestMayLeaveALoop() throws {
        var state = RedirectState(request: HTTPRequest(url: origin), maxHops: 50)
        let proposed = try #require(try state.proposal(after: redirect(302, to: "/start")))
        let taken = try state.take(
            moved(proposed, to: "http://127.0.0.1:8080/out"), proposed: proposed)
        #expect(taken.url.path == "/out")
        // What was sent is what a loop is told by: back to the start is one.
        let error = try #require(throws: HTTPError.self) {
            try state.next(after: redirect(302, to: "/start"))
        }
        #expect(error.message.contains("loop"))
    }

    @Test func aHopMovedToAnotherOriginCarriesNoneOfTheRequestsCredentials() throws {
        let request = HTTPRequest(
            url: origin,
            headers: [
                "Authorization": "Bearer t", "Cookie": "c", "X-Api-Key": "k", "X-Plain": "p",
            ],
            secretHeaderNames: ["x-api-key"])
        var state = RedirectState(request: request, maxHops: 5)
        let proposed = try #require(try state.proposal(after: redirect(302, to: "/same")))
        #expect(proposed.headers["Authorization"] == "Bearer t", "same origin: kept")
        var away = moved(proposed, to: "http://localhost:9090/away")
        away.headers["Cookie"] = "own"  // the handler's own value goes as set
        let taken = try state.take(away, proposed: proposed)
        #expect(taken.headers.names == ["cookie", "x-plain"])
        #expect(taken.headers["Cookie"] == "own")
        // Dropped for the rest of the chain, also back on the first origin.
        let back = try #require(
            try state.next(after: redirect(302, to: origin.absoluteString + "?back")))
        #expect(back.headers["Authorization"] == nil && back.headers["X-Api-Key"] == nil)
    }

    @Test func aHopKeptOnTheOriginKeepsTheCredentialsTheProposalDropped() throws {
        let request = HTTPRequest(
            url: origin, headers: ["Authorization": "Bearer t", "X-Api-Key": "k"],
            secretHeaderNames: ["x-api-key"])
        var state = RedirectState(request: request, maxHops: 5)
        let proposed = try #require(
            try state.proposal(after: redirect(302, to: "http://localhost:9090/x")))
        #expect(proposed.headers["Authorization"] == nil)
        // A handler that builds a new request for the same origin, setting its own
        // Authorization: that one is sent, and the rest come back with their secret mark.
        var home = HTTPRequest(
            url: URL(string: "http://127.0.0.1:8080/home")!, headers: ["Authorization": "mine"])
        home.headers["Accept"] = "json"
        let taken = try state.take(home, proposed: proposed)
        #expect(taken.headers["Authorization"] == "mine")
        #expect(taken.headers["X-Api-Key"] == "k")
        #expect(taken.isSecretHeader("X-Api-Key"))
        // A handler that removes a credential the proposal kept is obeyed.
        var same = RedirectState(request: request, maxHops: 5)
        let kept = try #require(try same.proposal(after: redirect(302, to: "/y")))
        var without = kept
        without.headers.remove("Authorization")
        #expect(try same.take(without, proposed: kept).headers["Authorization"] == nil)
    }

    @Test func aSecretBodyIsJudgedWhereTheTakenRequestGoes() throws {
        var request = HTTPRequest(url: origin, method: .post, body: Data("pw=hunter22".utf8))
        request.bodyIsSecret = true
        var state = RedirectState(request: request, maxHops: 3)
        let proposed = try #require(try state.proposal(after: redirect(307, to: "/same")))
        let error = try #require(throws: HTTPError.self) {
            try state.take(moved(proposed, to: "http://localhost:9090/x"), proposed: proposed)
        }
        #expect(error.kind == .invalidRequest)
        var back = RedirectState(request: request, maxHops: 3)
        let away = try #require(
            try back.proposal(after: redirect(307, to: "http://localhost:9090/x")))
        let taken = try back.take(moved(away, to: "http://127.0.0.1:8080/home"), proposed: away)
        #expect(taken.body == request.body, "kept on the origin: the body goes on")
    }

    @Test func aTakenURLMustBeHTTP() throws {
        var state = RedirectState(request: HTTPRequest(url: origin), maxHops: 3)
        let proposed = try #require(try state.proposal(after: redirect(302, to: "/a")))
        let error = try #require(throws: HTTPError.self) {
            try state.take(moved(proposed, to: "file:///etc/passwd"), proposed: proposed)
        }
        #expect(error.kind == .invalidURL)
    }
}
