import Foundation
import FoundationNetworking

// Plain URLSession, no Courier: N GETs, 64 at a time, printing VmRSS every 50,000; with a
// third argument, a new session every that many requests. It shows FoundationNetworking's own
// growth, about 145 bytes a request whether or not sessions are recycled (docs/benchmarks.md).
//   swiftc -O Tests/Soak/PlainURLSession.swift -o /tmp/plain-urlsession
//   /tmp/plain-urlsession http://127.0.0.1:PORT/small.json 300000 [20000]
let url = URL(string: CommandLine.arguments[1])!
let total = Int(CommandLine.arguments[2])!
let inFlight = 64
let config = URLSessionConfiguration.ephemeral
config.urlCache = nil
config.httpMaximumConnectionsPerHost = inFlight
var session = URLSession(configuration: config)
let recycle = CommandLine.arguments.count > 3 ? Int(CommandLine.arguments[3])! : 0
func rss() -> String {
    let status = try! String(contentsOfFile: "/proc/self/status", encoding: .utf8)
    return status.split(separator: "\n").first { $0.hasPrefix("VmRSS") }.map(String.init) ?? "?"
}
let semaphore = DispatchSemaphore(value: inFlight)
let group = DispatchGroup()
for index in 0..<total {
    semaphore.wait()
    if recycle > 0, index > 0, index % recycle == 0 {
        session.finishTasksAndInvalidate()
        session = URLSession(configuration: config)
    }
    group.enter()
    session.dataTask(with: url) { _, _, _ in
        semaphore.signal()
        group.leave()
    }.resume()
    if index % 50_000 == 0 { print(index, rss()) }
}
group.wait()
print(total, rss())
