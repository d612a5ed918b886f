@testable import CourierCurl
import Testing

/// A curl transfer's life as its event loop drives it, without a network or libcurl: each
/// transition and what it tells the loop to do.
@Suite("CurlTransferState")
struct CurlTransferStateTests {
    static var easy: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: 0x1000)! }

    @Test func aTransferRunsFromQueuedThroughHeadAndBodyToFinished() {
        var state = CurlTransferState.queued
        #expect(state.handle == nil)
        let admission = state.admit(cancelled: false)
        #expect(admission == .start)
        #expect(state == .queued, "still queued until it is in the multi handle")
        state.added(Self.easy)
        #expect(state == .running(Self.easy, .head) && state.handle == Self.easy)
        let first = state.bodyArrived()
        #expect(first, "the first body byte decides the coding")
        #expect(state == .running(Self.easy, .body))
        let again = state.bodyArrived()
        #expect(!again, "only once")
        state.curlFinished(answered: true)
        #expect(state == .finished(.answered) && state.handle == nil)
    }

    @Test func aTransferCancelledOrStoppedBeforeItStartedNeverReachesCurl() {
        var state = CurlTransferState.queued
        let admission = state.admit(cancelled: true)
        #expect(admission == .refuse)
        #expect(state == .finished(.cancelled))
    }

    @Test func aQueuedTransferIsLeftToItsFlagByACancel() {
        var state = CurlTransferState.queued
        let removed = state.cancel()
        #expect(removed == nil, "nothing to remove from the multi handle")
        #expect(state == .queued)
    }

    @Test func aTransferThatCouldNotBeAddedFails() {
        var state = CurlTransferState.queued
        _ = state.admit(cancelled: false)
        state.notAdded()
        #expect(state == .finished(.failed))
    }

    @Test func aFullReaderPausesAndACaughtUpOneResumes() {
        var state = CurlTransferState.running(Self.easy, .body)
        state.pause()
        #expect(state == .paused(Self.easy) && state.handle == Self.easy)
        let first = state.bodyArrived()
        #expect(!first, "no coding decision while paused")
        let unpaused = state.resume()
        #expect(unpaused == Self.easy, "the handle to unpause")
        #expect(state == .running(Self.easy, .body), "running before curl_easy_pause is called")
        let again = state.resume()
        #expect(again == nil, "a running transfer is not unpaused")
    }

    @Test func anUnpauseAfterTheTransferEndedDoesNothing() {
        for ending in [CurlTransferState.Ending.answered, .failed, .cancelled] {
            var state = CurlTransferState.finished(ending)
            let unpaused = state.resume()
            #expect(unpaused == nil)
            #expect(state == .finished(ending))
        }
    }

    @Test func aCancelRemovesARunningOrPausedTransferOnce() {
        for start in [
            CurlTransferState.running(Self.easy, .head), .running(Self.easy, .body),
            .paused(Self.easy),
        ] {
            var state = start
            let removed = state.cancel()
            #expect(removed == Self.easy, "\(start)")
            #expect(state == .finished(.cancelled))
            let again = state.cancel()
            #expect(again == nil, "a second cancel finds nothing to remove")
        }
    }

    @Test func curlMayFinishAPausedTransfer() {
        var state = CurlTransferState.paused(Self.easy)
        state.curlFinished(answered: false)
        #expect(state == .finished(.failed))
    }
}
