import Courier
import Foundation
import Testing

/// Every form of quota header a server sends, read into one ``RateLimitQuota``.
@Suite struct RateLimitQuotaTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func separateDraftFields() {
        let headers: HTTPHeaders = [
            "RateLimit-Limit": "100", "RateLimit-Remaining": "7", "RateLimit-Reset": "30",
        ]
        #expect(
            RateLimitQuota.parse(headers, now: now)
                == RateLimitQuota(limit: 100, remaining: 7, reset: 30))
    }

    @Test func draftLimitWithPoliciesTakesTheFirstNumber() {
        let headers: HTTPHeaders = [
            "ratelimit-limit": "10, 10;w=1, 50;w=60", "ratelimit-remaining": "3",
        ]
        #expect(
            RateLimitQuota.parse(headers, now: now)
                == RateLimitQuota(limit: 10, remaining: 3, reset: nil))
    }

    @Test func combinedDraft07Form() {
        let headers: HTTPHeaders = ["RateLimit": "limit=50, remaining=4, reset=12"]
        #expect(
            RateLimitQuota.parse(headers, now: now)
                == RateLimitQuota(limit: 50, remaining: 4, reset: 12))
    }

    @Test func structuredFormTakesThePolicyWithTheFewestLeft() {
        let headers: HTTPHeaders = [
            "RateLimit": #""burst";r=9;t=1, "day";r=2;t=3600"#,
            "RateLimit-Policy": #""burst";q=10;w=1, "day";q=1000;w=86400"#,
        ]
        #expect(
            RateLimitQuota.parse(headers, now: now)
                == RateLimitQuota(limit: 1000, remaining: 2, reset: 3600))
    }

    @Test func draft07PolicyGivesTheLimit() {
        let headers: HTTPHeaders = [
            "RateLimit-Policy": "100;w=60", "RateLimit-Remaining": "5", "RateLimit-Reset": "9",
        ]
        #expect(
            RateLimitQuota.parse(headers, now: now)
                == RateLimitQuota(limit: 100, remaining: 5, reset: 9))
    }

    @Test func commonXFieldsWithDeltaSeconds() {
        let headers: HTTPHeaders = [
            "X-RateLimit-Limit": "60", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "42",
        ]
        #expect(
            RateLimitQuota.parse(headers, now: now)
                == RateLimitQuota(limit: 60, remaining: 0, reset: 42))
    }

    @Test func githubEpochResetIsTimeLeft() {
        let headers: HTTPHeaders = [
            "X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "12",
            "X-RateLimit-Reset": "1800000095",
        ]
        #expect(RateLimitQuota.parse(headers, now: now)?.reset == 95)
        let passed: HTTPHeaders = ["X-RateLimit-Remaining": "1", "X-RateLimit-Reset": "1799999000"]
        #expect(RateLimitQuota.parse(passed, now: now)?.reset == 0, "a reset gone by is now")
        let millis: HTTPHeaders = [
            "X-RateLimit-Remaining": "1", "X-RateLimit-Reset": "1800000002500",
        ]
        #expect(RateLimitQuota.parse(millis, now: now)?.reset == 2.5)
    }

    @Test func draftFieldsWinOverTheCommonOnes() {
        let headers: HTTPHeaders = [
            "X-RateLimit-Remaining": "100", "X-RateLimit-Reset": "60",
            "RateLimit-Remaining": "2", "RateLimit-Reset": "5",
        ]
        #expect(RateLimitQuota.parse(headers, now: now)?.remaining == 2)
    }

    @Test func nothingWithoutARemainingCount() {
        #expect(RateLimitQuota.parse(["Content-Type": "text/plain"], now: now) == nil)
        #expect(RateLimitQuota.parse(["RateLimit-Limit": "10"], now: now) == nil)
        #expect(RateLimitQuota.parse(["RateLimit-Remaining": "many"], now: now) == nil)
        #expect(RateLimitQuota.parse(["RateLimit": "garbage"], now: now) == nil)
        #expect(
            RateLimitQuota.parse(
                ["X-RateLimit-Reset": "-3", "X-RateLimit-Remaining": "-1"], now: now)
                == RateLimitQuota(limit: nil, remaining: 0, reset: nil))
    }
}
