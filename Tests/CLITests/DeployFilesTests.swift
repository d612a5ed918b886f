import CourierTestSupport
import Foundation
import Testing

/// The files in `deploy/` as a user installs them: systemd reads the units without a
/// complaint and rates their hardening, and the very command lines of the service and of the
/// cron file run the built binary against the fixture server, secrets read from a
/// credentials folder, with a ping and a metrics file, twice, and once beside a run that holds
/// the lock.
@Suite("deploy files")
struct DeployFilesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let systemd = root.appendingPathComponent("deploy/systemd")

    static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The unit files as installed for the job `nightly`, ExecStart pointing at the built
    /// binary (verify checks that it exists), in a folder of their own.
    static func installedUnits() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-units-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (file, instance) in [
            ("courier@.service", "courier@nightly.service"),
            ("courier@.timer", "courier@nightly.timer"),
            ("courier-failed@.service", "courier-failed@nightly.service"),
        ] {
            let unit = try text("deploy/systemd/\(file)")
                .replacingOccurrences(of: "/usr/local/bin/courier", with: CourierBinary.url.path)
            try unit.write(
                to: folder.appendingPathComponent(instance), atomically: true, encoding: .utf8)
        }
        return folder
    }

    @Test("systemd-analyze verify reads every unit without a warning")
    func verify() async throws {
        let folder = try Self.installedUnits()
        defer { try? FileManager.default.removeItem(at: folder) }
        let units = [
            "courier@nightly.service", "courier@nightly.timer", "courier-failed@nightly.service",
        ]
        let result = try await CourierBinary.run(
            ["verify", "--man=no"] + units.map { folder.appendingPathComponent($0).path },
            executable: URL(fileURLWithPath: "/usr/bin/systemd-analyze"), directory: folder)
        #expect(result.status == 0, "\(result.stderr)")
        // verify exits 0 over an unknown key or a value it cannot parse: it says so on stderr.
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        #expect(result.stdout.isEmpty, "\(result.stdout)")

        // The check is real: a misspelt key and a bad exit status are reported.
        let broken = folder.appendingPathComponent("courier@broken.service")
        try Self.text("deploy/systemd/courier@.service")
            .replacingOccurrences(of: "/usr/local/bin/courier", with: CourierBinary.url.path)
            .replacingOccurrences(of: "\nNice=", with: "\nNicee=")
            .replacingOccurrences(of: "SuccessExitStatus=3 143", with: "SuccessExitStatus=3 x")
            .write(to: broken, atomically: true, encoding: .utf8)
        let refused = try await CourierBinary.run(
            ["verify", "--man=no", broken.path],
            executable: URL(fileURLWithPath: "/usr/bin/systemd-analyze"), directory: folder)
        #expect(refused.stderr.contains("Unknown key 'Nicee'"), "\(refused.stderr)")
        #expect(refused.stderr.contains("Failed to parse"), "\(refused.stderr)")
    }

    @Test("the service's hardening rates OK or better with systemd-analyze security")
    func hardening() async throws {
        let folder = try Self.installedUnits()
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try await CourierBinary.run(
            [
                "security", "--offline=yes", "--no-pager",
                folder.appendingPathComponent("courier@nightly.service").path,
            ], executable: URL(fileURLWithPath: "/usr/bin/systemd-analyze"), directory: folder)
        let line = try #require(
            result.stdout.split(separator: "\n").first { $0.contains("Overall exposure level") },
            "\(result.stdout)\(result.stderr)")
        let level = line.split(separator: ":").last?.split(separator: " ").first.flatMap {
            Double($0)
        }
        // 0 is the most locked down, 10 the least; systemd calls up to 2.9 "OK" and below 1.0
        // "SAFE". A network client that writes files cannot be much below 1.5.
        #expect(try #require(level) <= 2.0, "\(line)")
    }

    @Test("SuccessExitStatus is 3 and 143, as the exit code table of docs/scheduling.md says")
    func exitStatuses() throws {
        let unit = try Self.text("deploy/systemd/courier@.service")
        let lines = unit.split(separator: "\n").filter { $0.hasPrefix("SuccessExitStatus=") }
        #expect(lines == ["SuccessExitStatus=3 143"])
        let scheduling = try Self.text("docs/scheduling.md")
        #expect(scheduling.contains("succeeds (`SuccessExitStatus=3`)"))
        #expect(scheduling.contains("143 succeeds (`SuccessExitStatus=143`)"))
        let timer = try Self.text("deploy/systemd/courier@.timer")
        #expect(timer.contains("\nPersistent=true\n"))
    }

    /// A job like the one in docs/scheduling.md, its token and ping URL read from a credentials
    /// folder.
    struct Installation {
        let space: JobWorkspace
        let credentials: URL
        let state: URL
        let jobs: URL
        let logs: URL
        let metrics: URL

        init(tasks: String) throws {
            space = try JobWorkspace()
            let base = space.folder
            func folder(_ name: String) throws -> URL {
                let url = base.appendingPathComponent(name)
                try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
                return url
            }
            credentials = try folder("credentials")
            state = try folder("state")
            jobs = try folder("jobs")
            logs = state.appendingPathComponent("logs")
            metrics = try folder("node-exporter")
            // Its home, as docs/scheduling.md writes it: the courier user's folder.
            let job = #"""
                {"version": 1, "name": "nightly", "home": "\#(state.path)",
                 "baseURL": "\#(space.server.baseURL.absoluteString)",
                 "auth": {"bearer": "${file:$CREDENTIALS_DIRECTORY/api-token}"},
                 "notify": {"ping": "${file:$CREDENTIALS_DIRECTORY/hc-ping-url}"},
                 "tasks": [\#(tasks)]}
                """#
            try job.write(
                to: jobs.appendingPathComponent("nightly.json"), atomically: true, encoding: .utf8)
        }

        func secrets(token: String, ping: String) throws {
            try token.write(
                to: credentials.appendingPathComponent("api-token"), atomically: true,
                encoding: .utf8)
            try ping.write(
                to: credentials.appendingPathComponent("hc-ping-url"), atomically: true,
                encoding: .utf8)
        }

        /// A deploy file's command line with this installation's folders for the real ones.
        func localized(_ command: String) -> String {
            [
                ("/etc/courier/credentials/nightly", credentials.path),
                ("/etc/courier/jobs", jobs.path),
                ("/var/lib/courier", state.path),
                ("/var/lib/prometheus/node-exporter", metrics.path),
                ("/usr/local/bin/courier", CourierBinary.url.path),
            ].reduce(command) { $0.replacingOccurrences(of: $1.0, with: $1.1) }
        }

        /// Runs `command` with `sh -c`, as cron does, courier on the PATH, from `/`: the job's
        /// home, not the working folder, decides where its files go.
        func shell(_ command: String, environment: [String: String] = [:]) throws
            -> CourierBinary.Running
        {
            let path = CourierBinary.url.deletingLastPathComponent().path + ":/usr/bin:/bin"
            return try CourierBinary.launch(
                ["-c", localized(command)], executable: URL(fileURLWithPath: "/bin/sh"),
                environment: environment.merging(["PATH": path]) { $1 },
                directory: URL(fileURLWithPath: "/"))
        }

        func remove() { space.remove() }
    }

    /// The entries of the cron file: schedule, user and command. With `commented`, the entries
    /// the file ships commented out (`#15 2 * * * courier …`, the node_exporter variant).
    static func cronEntries(commented: Bool = false) throws -> [(
        schedule: [String], user: String, command: String
    )] {
        try text("deploy/cron/courier.cron").split(separator: "\n").compactMap { line in
            var trimmed = line.trimmingCharacters(in: .whitespaces)
            if commented {
                // A commented entry starts with "#" and a digit or "*": prose does not.
                guard trimmed.hasPrefix("#"), let next = trimmed.dropFirst().first,
                    next.isNumber || next == "*"
                else { return nil }
                trimmed = String(trimmed.dropFirst())
            }
            if trimmed.isEmpty || trimmed.hasPrefix("#") { return nil }
            // SHELL=, PATH=, MAILTO=: assignments, not entries.
            if let equals = trimmed.firstIndex(of: "="),
                !trimmed[..<equals].contains(" ")
            {
                return nil
            }
            let fields = trimmed.split(
                separator: " ", maxSplits: 6, omittingEmptySubsequences: true)
            guard fields.count == 7 else { return (schedule: [], user: "", command: trimmed) }
            let command = fields[6].trimmingCharacters(in: .whitespaces)
            return (fields[0..<5].map(String.init), String(fields[5]), command)
        }
    }

    @Test("each cron entry has five valid time fields, the courier user and a command")
    func cronSyntax() throws {
        let entries = try Self.cronEntries() + Self.cronEntries(commented: true)
        // One job as shipped (a second, for a job that does not exist, mailed an error every
        // 15 minutes), and its node_exporter variant commented out.
        #expect(try Self.cronEntries().count == 1)
        #expect(try Self.cronEntries(commented: true).count == 1)
        let bounds = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 7)]
        for entry in entries {
            #expect(entry.schedule.count == 5, "\(entry.command)")
            #expect(entry.user == "courier")
            #expect(entry.command.contains("courier run "))
            #expect(entry.command.contains("--quiet"), "cron mails what a command prints")
            for (field, (low, high)) in zip(entry.schedule, bounds) {
                #expect(
                    Self.cronField(field, low: low, high: high), "\(field) in \(entry.schedule)")
            }
        }
        #expect(!Self.cronField("61", low: 0, high: 59))
        #expect(!Self.cronField("*/0", low: 0, high: 59))
        #expect(Self.cronField("1-5,10", low: 0, high: 59))
    }

    /// A cron time field: `*`, a number, a range or a list of them, each with an optional step.
    static func cronField(_ field: String, low: Int, high: Int) -> Bool {
        field.split(separator: ",", omittingEmptySubsequences: false).allSatisfy { part in
            let pieces = part.split(separator: "/", omittingEmptySubsequences: false)
            guard pieces.count <= 2 else { return false }
            if pieces.count == 2 {
                guard let step = Int(pieces[1]), step >= 1, step <= high else { return false }
            }
            if pieces[0] == "*" { return true }
            let ends = pieces[0].split(separator: "-", omittingEmptySubsequences: false)
            let numbers = ends.compactMap { Int($0) }
            guard numbers.count == ends.count, (1...2).contains(numbers.count),
                numbers.allSatisfy({ (low...high).contains($0) })
            else { return false }
            return numbers.count == 1 || numbers[0] <= numbers[1]
        }
    }

    @Test("the cron line runs the job as shipped: silent on success, its ping, twice over")
    func cronRuns() async throws {
        let install = try Installation(
            tasks:
                #"{"id": "user-{n}", "path": "/echo", "query": {"n": "{n}"}, "foreach": {"n": {"range": [1, 3]}}, "save": "users/{n}.json"}"#
        )
        defer { install.remove() }
        let check = PingRunTests.Check("cron", on: install.space.server)
        let token = "tok-\(UUID().uuidString)"
        try install.secrets(token: token, ping: check.url())
        let command = try #require(Self.cronEntries().first).command
        for run in 1...2 {
            let (status, stdout, stderr) = try await install.shell(command).exit(seconds: 300)
            #expect(status == 0, "run \(run): \(stderr)")
            #expect(
                stdout.isEmpty && stderr.isEmpty, "run \(run) mails nothing: \(stdout)\(stderr)")
        }
        #expect(try await check.paths() == ["/start", "/0", "/start", "/0"])
        let saved = install.state.appendingPathComponent("out/nightly/users")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: saved.path).sorted() == [
                "1.json", "2.json", "3.json",
            ])
        // The shipped line needs no node_exporter: it asks for no metrics file.
        #expect(try FileManager.default.contentsOfDirectory(atPath: install.metrics.path).isEmpty)
        // The commented variant, uncommented where node_exporter's folder exists, adds them.
        let variant = try #require(Self.cronEntries(commented: true).first).command
        #expect(variant.contains("--metrics-file"))
        let (status, stdout, stderr) = try await install.shell(variant).exit(seconds: 300)
        #expect(status == 0 && stdout.isEmpty && stderr.isEmpty, "\(stdout)\(stderr)")
        let metrics = try String(
            contentsOf: install.metrics.appendingPathComponent("courier-nightly.prom"),
            encoding: .utf8)
        #expect(
            metrics.contains(#"courier_run_tasks{job="nightly",shard="whole",outcome="ok"} 3"#),
            "\(metrics)")
        #expect(metrics.contains("courier_last_success_timestamp_seconds{"))
        let logs = try FileManager.default.contentsOfDirectory(
            atPath: install.logs.appendingPathComponent("nightly").path)
        #expect(logs.count == 3)
        var written = Data(metrics.utf8)
        let files = FileManager.default.enumerator(
            at: install.logs, includingPropertiesForKeys: nil)
        while let url = files?.nextObject() as? URL {
            written.append(FileManager.default.contents(atPath: url.path) ?? Data())
        }
        for secret in [token, check.uuid] {
            #expect(written.range(of: Data(secret.utf8)) == nil, "\(secret) was written")
        }
    }

    @Test("a cron run that finds the last one still going mails one line and exits 3")
    func cronOverlap() async throws {
        // The first run's one request stays open until the test lets it end: the second
        // starts while the first holds the lock however slow the machine is (a loaded
        // `make test` passed the job's default 30 s timeout three times before the second ran).
        let gate = "cron-overlap-\(UUID().uuidString)"
        let install = try Installation(
            tasks:
                #"{"id": "held", "path": "/gate", "query": {"name": "\#(gate)", "max": "900"}, "timeout": 900}"#
        )
        defer { install.remove() }
        let check = PingRunTests.Check("cron-overlap", on: install.space.server)
        try install.secrets(token: "token-\(UUID().uuidString)", ping: check.url())
        let command = try #require(Self.cronEntries().first).command
        let first = try install.shell(command)
        // The first holds the lock once its ping has gone out (a hang guard of 900 s).
        let deadline = Date().addingTimeInterval(900)
        while try await check.paths().isEmpty, Date() < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        let (status, stdout, stderr) = try await install.shell(command).exit(seconds: 900)
        _ = await ProbeClient().get(install.space.server.url("/toggle/on?name=\(gate)"))
        #expect(status == 3, "\(stderr)")
        #expect(stdout.isEmpty)
        #expect(stderr.split(separator: "\n").count == 1, "one line to mail: \(stderr)")
        #expect(stderr.contains("holds"), "\(stderr)")
        let (firstStatus, _, firstError) = await first.exit(seconds: 300)
        #expect(firstStatus == 0, "the first goes on untouched: \(firstError)")
        #expect(try await check.paths() == ["/start", "/0"], "the second pinged nothing")
    }

    @Test("the service's ExecStart runs the job from its working folder with its credentials")
    func serviceCommand() async throws {
        let install = try Installation(
            tasks: #"{"id": "a", "path": "/echo", "save": "a.json"}"#)
        defer { install.remove() }
        let check = PingRunTests.Check("unit", on: install.space.server)
        try install.secrets(token: "token-\(UUID().uuidString)", ping: check.url())
        let unit = try Self.text("deploy/systemd/courier@.service")
        // ExecStart= with its continuation lines joined, %i the instance.
        let joined = unit.replacingOccurrences(of: "\\\n", with: " ")
        let line = try #require(
            joined.split(separator: "\n").first { $0.hasPrefix("ExecStart=") })
        let command = line.dropFirst("ExecStart=".count)
            .replacingOccurrences(of: "%i", with: "nightly")
        // Without COURIER_OPTIONS (the unit's default, empty) no metrics file is asked for;
        // with the drop-in of docs/scheduling.md, one is written.
        let plain = try await install.shell(
            command, environment: ["CREDENTIALS_DIRECTORY": install.credentials.path]
        ).exit(seconds: 300)
        #expect(plain.0 == 0, "\(plain.2)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: install.metrics.path).isEmpty)
        let scheduling = try Self.text("docs/scheduling.md")
        let dropIn = try #require(
            scheduling.split(separator: "\n").first {
                $0.contains("Environment=\"COURIER_OPTIONS=")
            })
        let options = try #require(
            dropIn.split(separator: "\"").dropFirst().first?.dropFirst("COURIER_OPTIONS=".count))
        let (status, _, stderr) = try await install.shell(
            command,
            environment: [
                "CREDENTIALS_DIRECTORY": install.credentials.path,
                "COURIER_OPTIONS": install.localized(
                    options.replacingOccurrences(of: "%i", with: "nightly")),
            ]
        ).exit(seconds: 300)
        #expect(status == 0, "\(stderr)")
        #expect(
            FileManager.default.fileExists(
                atPath: install.state.appendingPathComponent("out/nightly/a.json").path))
        #expect(
            FileManager.default.fileExists(
                atPath: install.metrics.appendingPathComponent("courier-nightly.prom").path))
        #expect(try await check.paths() == ["/start", "/0", "/start", "/0"])
    }
}
