import Courier
import Foundation

/// `courier bench URL [--backend curl,urlsession] [-n N] [-c N] [--warmup N] [--json]`
enum BenchCommand {
    static let usage = """
        Usage: courier bench URL [--backend curl,urlsession] [-n REQUESTS] [-c IN_FLIGHT]
                                 [--warmup REQUESTS] [--json]
        Sends URL REQUESTS times per backend (default 10000, curl) with IN_FLIGHT at once
        (default 64) and prints requests per second and CPU time per request.
        """

    static func run(_ arguments: [String]) async -> Int32 {
        var parser = ArgumentParser(arguments, command: "bench")
        do {
            if parser.flag("--help") {
                Console.output(usage)
                return CommandLineInterface.ExitCode.success
            }
            let backends = try parser.option("--backend").map(parseBackends) ?? [.curl]
            let requests = try parser.integer("-n", default: 10_000, range: 1...10_000_000)
            let concurrency = try parser.integer("-c", default: 64, range: 1...10_000)
            let warmup = try parser.integer(
                "--warmup", default: min(1_000, requests), range: 0...1_000_000)
            let json = parser.flag("--json")
            let target = try parser.positional("URL")
            try parser.finish()
            guard let url = URL(string: target), ["http", "https"].contains(url.scheme ?? "") else {
                throw UsageError("bench: '\(target)' is not an http or https URL")
            }
            var results: [BenchmarkRunner.Result] = []
            for backend in backends {
                let runner = BenchmarkRunner(
                    backend: backend.rawValue,
                    client: backend.makeClient(maxConnectionsPerHost: concurrency))
                results.append(
                    await runner.run(
                        .init(
                            url: url, requests: requests, concurrency: concurrency, warmup: warmup))
                )
            }
            Console.output(json ? jsonLines(results) : table(results))
            return CommandLineInterface.ExitCode.success
        } catch let error as UsageError {
            Console.error("courier \(error.message)")
            return CommandLineInterface.ExitCode.usage
        } catch {
            Console.error("courier bench: \(error)")
            return CommandLineInterface.ExitCode.usage
        }
    }

    private static func parseBackends(_ text: String) throws -> [Backend] {
        try text.split(separator: ",").map { name in
            guard let backend = Backend(rawValue: String(name)) else {
                throw UsageError("bench: unknown backend '\(name)' (expected curl or urlsession)")
            }
            return backend
        }
    }

    private static func table(_ results: [BenchmarkRunner.Result]) -> String {
        var lines = ["backend      requests  in-flight   errors  non-2xx      req/s  cpu µs/req"]
        for result in results {
            lines.append(
                [
                    result.backend.padding(toLength: 10, withPad: " ", startingAt: 0),
                    String(result.requests).leftPadded(10),
                    String(result.concurrency).leftPadded(10),
                    String(result.errors).leftPadded(8),
                    String(result.non2xx).leftPadded(8),
                    String(format: "%.0f", result.requestsPerSecond).leftPadded(10),
                    String(format: "%.1f", result.cpuMicrosecondsPerRequest).leftPadded(11),
                ].joined(separator: " "))
        }
        return lines.joined(separator: "\n")
    }

    private static func jsonLines(_ results: [BenchmarkRunner.Result]) -> String {
        results.map { result in
            let object: [String: Any] = [
                "backend": result.backend, "requests": result.requests,
                "concurrency": result.concurrency, "errors": result.errors,
                "non2xx": result.non2xx, "bytes": result.bytes, "seconds": result.seconds,
                "cpuSeconds": result.cpuSeconds, "requestsPerSecond": result.requestsPerSecond,
                "cpuMicrosecondsPerRequest": result.cpuMicrosecondsPerRequest,
            ]
            let data =
                (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
                ?? Data()
            return String(decoding: data, as: UTF8.self)
        }.joined(separator: "\n")
    }
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
