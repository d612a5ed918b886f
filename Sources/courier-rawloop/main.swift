// The reference `make bench` measures Courier against: the least a Swift program can do to make
// N GETs with libcurl's multi interface. One thread, one multi handle, one easy handle per slot
// configured once and re-added after each transfer (so its connection and buffers are reused),
// bodies counted and dropped. No Courier code: what Courier adds on top is what its rows cost
// beyond this one.
//
// Usage: courier-rawloop URL [-n REQUESTS] [-c IN_FLIGHT] [--warmup N]
// Prints one JSON line with the fields `courier bench --json` uses for the same figures.

import CCurl
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

struct Options {
    var url = ""
    var requests = 50_000
    var inFlight = 64
    var warmup = 2_000

    init(_ arguments: [String]) {
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "-n": requests = Int(rest.popFirst() ?? "") ?? requests
            case "-c": inFlight = Int(rest.popFirst() ?? "") ?? inFlight
            case "--warmup": warmup = Int(rest.popFirst() ?? "") ?? warmup
            default: url = argument
            }
        }
    }
}

/// CPU seconds (user and system) of this process so far, and its peak RSS in bytes.
func usage() -> (cpu: Double, peakRSS: Int) {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let cpu =
        Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    return (cpu, Int(usage.ru_maxrss) * 1024)
}

/// Runs `count` transfers over the slots' handles, `inFlight` at a time; returns the number
/// that failed (a curl error or a status other than 200).
func run(_ count: Int, handles: [UnsafeMutableRawPointer], multi: UnsafeMutableRawPointer) -> Int {
    var started = 0
    var finished = 0
    var failed = 0
    for handle in handles where started < count {
        curl_multi_add_handle(multi, handle)
        started += 1
    }
    var running: Int32 = 0
    while finished < count {
        curl_multi_perform(multi, &running)
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle
            else { continue }
            var status = 0
            ccurl_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
            if message.pointee.data.result != CURLE_OK || status != 200 { failed += 1 }
            finished += 1
            curl_multi_remove_handle(multi, handle)
            if started < count {
                curl_multi_add_handle(multi, handle)
                started += 1
            }
        }
        if finished < count { curl_multi_poll(multi, nil, 0, 1000, nil) }
    }
    return failed
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
guard !options.url.isEmpty, options.requests > 0, options.inFlight > 0 else {
    FileHandle.standardError.write(
        Data("usage: courier-rawloop URL [-n REQUESTS] [-c IN_FLIGHT] [--warmup N]\n".utf8))
    exit(64)
}
curl_global_init(Int(CURL_GLOBAL_DEFAULT))
guard let multi = curl_multi_init() else { exit(70) }
ccurl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, options.inFlight)
let discard: ccurl_data_callback = { _, size, count, _ in size * count }
let url = strdup(options.url)
let handles = (0..<options.inFlight).map { _ -> UnsafeMutableRawPointer in
    guard let handle = curl_easy_init() else { exit(70) }
    ccurl_easy_setopt_pointer(handle, CURLOPT_URL, url)
    ccurl_easy_setopt_data_callback(handle, CURLOPT_WRITEFUNCTION, discard)
    ccurl_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
    return handle
}
var failed = run(options.warmup, handles: handles, multi: multi)
let before = usage()
let start = DispatchTime.now().uptimeNanoseconds
failed += run(options.requests, handles: handles, multi: multi)
let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
let after = usage()
let result: [String: Any] = [
    "backend": "rawloop",
    "requests": options.requests,
    "errors": failed,
    "seconds": seconds,
    "requestsPerSecond": Double(options.requests) / seconds,
    "cpuMicrosecondsPerRequest": (after.cpu - before.cpu) / Double(options.requests) * 1e6,
    "peakRSSBytes": after.peakRSS,
]
let line = try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])
FileHandle.standardOutput.write(line + Data("\n".utf8))
exit(failed == 0 ? 0 : 1)
