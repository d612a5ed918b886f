import Courier
import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `make deb`'s packaging script (packaging/build-deb.sh) run on the debug build, as it runs on
/// the release build: every file in its place with its mode, the control fields, a packaged
/// courier that runs from the unpacked tree, units that start /usr/bin/courier, lintian, and
/// a postinst that makes the courier user once. The release build itself is `make deb`'s (a
/// test run cannot afford one).
@Suite("Debian package")
struct DebianPackageTests {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The package and its unpacked tree, in a folder beside the build (replaced by each run,
    /// so nothing piles up in /tmp).
    struct Built: Sendable {
        let deb: URL
        let tree: URL
        /// The control files (`dpkg-deb -e`): control, md5sums, postinst, postrm.
        let control: URL
    }

    /// Built once per test process: the tests below all read the same package.
    static let built = Task { () throws -> Built in
        let folder = CourierBinary.url.deletingLastPathComponent()
            .appendingPathComponent("test-deb")
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // gzip, not xz: the same package 7 s sooner, and compression is dpkg-deb's own affair.
        // The debug build links the toolchain's Swift runtime, which no Debian package holds.
        let result = try await CourierBinary.run(
            ["--allow-unpackaged-libraries", CourierBinary.url.path, folder.path],
            executable: repo.appendingPathComponent("packaging/build-deb.sh"),
            environment: ["DEB_COMPRESSION": "gzip"], directory: repo)
        guard result.status == 0,
            let path = result.stdout.split(separator: "\n").last.map(String.init)
        else { throw Failure("build-deb.sh failed (\(result.status)): \(result.stderr)") }
        let tree = folder.appendingPathComponent("tree")
        let control = folder.appendingPathComponent("control")
        try await tool("dpkg-deb", ["-x", path, tree.path])
        try await tool("dpkg-deb", ["-e", path, control.path])
        return Built(deb: URL(fileURLWithPath: path), tree: tree, control: control)
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// Runs a tool from /usr/bin (or /usr/sbin) and returns its stdout; throws when it fails.
    @discardableResult
    static func tool(_ name: String, _ arguments: [String], environment: [String: String] = [:])
        async throws -> String
    {
        let path =
            ["/usr/bin/", "/usr/sbin/"].map { $0 + name }
            .first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/usr/bin/" + name
        let result = try await CourierBinary.run(
            arguments, executable: URL(fileURLWithPath: path), environment: environment)
        guard result.status == 0 else {
            throw Failure("\(name) \(arguments.joined(separator: " ")): \(result.stderr)")
        }
        return result.stdout
    }

    static func installed(_ name: String) -> Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/" + name)
    }

    /// Every file and folder of the package, as `dpkg-deb -c` lists it: mode and owner.
    static let expected: [String: String] = [
        "./usr/bin/courier": "-rwxr-xr-x",
        "./usr/share/man/man1/courier.1.gz": "-rw-r--r--",
        "./usr/share/bash-completion/completions/courier": "-rw-r--r--",
        "./usr/share/zsh/vendor-completions/_courier": "-rw-r--r--",
        "./usr/share/fish/vendor_completions.d/courier.fish": "-rw-r--r--",
        "./usr/lib/systemd/system/courier@.service": "-rw-r--r--",
        "./usr/lib/systemd/system/courier@.timer": "-rw-r--r--",
        "./usr/lib/systemd/system/courier-failed@.service": "-rw-r--r--",
        "./usr/share/doc/courier/examples/courier.cron": "-rw-r--r--",
        "./usr/share/doc/courier/copyright": "-rw-r--r--",
        "./usr/share/doc/courier/changelog.Debian.gz": "-rw-r--r--",
        "./usr/share/doc/courier/changelog.gz": "-rw-r--r--",
        "./usr/share/lintian/overrides/courier": "-rw-r--r--",
    ]

    @Test("every file is in its place with its mode, owned by root, and nothing else is there")
    func files() async throws {
        let built = try await Self.built.value
        let listing = try await Self.tool("dpkg-deb", ["-c", built.deb.path])
        var files: [String: String] = [:]
        for line in listing.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            try #require(fields.count >= 6, "\(line)")
            let (mode, owner, path) = (String(fields[0]), fields[1], String(fields[5]))
            #expect(owner == "root/root", "\(line)")
            if mode.hasPrefix("d") {
                #expect(mode == "drwxr-xr-x", "\(line)")
            } else {
                files[path] = mode
            }
        }
        #expect(files == Self.expected)
        // Not live in /etc/cron.d: nothing runs before someone says so.
        #expect(!listing.contains("./etc/"))
    }

    @Test(
        "the control fields name the package, the CLI's version, this machine's architecture and libcurl4"
    )
    func control() async throws {
        let built = try await Self.built.value
        func field(_ name: String) async throws -> String {
            try await Self.tool("dpkg-deb", ["-f", built.deb.path, name])
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(try await field("Package") == "courier")
        #expect(try await field("Version") == "\(CourierVersion.current)-1")
        let arch = try await Self.tool("dpkg", ["--print-architecture"])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await field("Architecture") == arch)
        #expect(built.deb.lastPathComponent == "courier_\(CourierVersion.current)-1_\(arch).deb")
        let depends = try await field("Depends").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces).split(separator: " ").first.map(String.init)
        }
        // From the libraries the binary links (dpkg-shlibdeps), and useradd for postinst.
        for package in ["libcurl4", "libc6", "zlib1g", "libbrotli1", "libzstd1", "passwd"] {
            #expect(depends.contains(package), "Depends: \(depends)")
        }
        #expect((Int(try await field("Installed-Size")) ?? 0) > 1000)
        #expect(try await field("Maintainer").contains("@"))
    }

    @Test(
        "the packaged courier runs from the unpacked tree: version, validate, man page, completions"
    )
    func packagedBinaryRuns() async throws {
        let built = try await Self.built.value
        let courier = built.tree.appendingPathComponent("usr/bin/courier")
        let version = try await CourierBinary.run(["--version"], executable: courier)
        #expect(version.status == 0, "\(version.stderr)")
        #expect(version.stdout.hasPrefix("courier \(CourierVersion.current)\n"))

        let space = try JobWorkspace()
        defer { space.remove() }
        try space.writeJob(tasks: #"{"id": "one", "path": "/echo", "save": "one.json"}"#)
        let valid = try await CourierBinary.run(
            ["validate", "job.json"], executable: courier, directory: space.folder)
        #expect(valid.status == 0, "\(valid.stdout)\(valid.stderr)")
        // validate can say no: the same binary refuses a job with a task missing its path.
        try space.writeJob(tasks: #"{"id": "one"}"#)
        let refused = try await CourierBinary.run(
            ["validate", "job.json"], executable: courier, directory: space.folder)
        #expect(refused.status == 2, "\(refused.stdout)\(refused.stderr)")

        // The man page and completions are the binary's own output, as installed.
        let man = try await Self.tool(
            "gzip",
            ["-dc", built.tree.appendingPathComponent("usr/share/man/man1/courier.1.gz").path])
        #expect(man == (try await CourierBinary.run(["man"])).stdout)
        for (shell, path) in [
            ("bash", "usr/share/bash-completion/completions/courier"),
            ("zsh", "usr/share/zsh/vendor-completions/_courier"),
            ("fish", "usr/share/fish/vendor_completions.d/courier.fish"),
        ] {
            let installed = try String(
                contentsOf: built.tree.appendingPathComponent(path), encoding: .utf8)
            let own = try await CourierBinary.run(["completions", shell])
            #expect(!installed.isEmpty && installed == own.stdout, "\(path)")
        }
    }

    @Test("the units start /usr/bin/courier, and are deploy/systemd's otherwise")
    func units() async throws {
        let built = try await Self.built.value
        let folder = built.tree.appendingPathComponent("usr/lib/systemd/system")
        for name in ["courier@.service", "courier@.timer", "courier-failed@.service"] {
            let packaged = try String(
                contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            let source = try String(
                contentsOf: Self.repo.appendingPathComponent("deploy/systemd/\(name)"),
                encoding: .utf8)
            #expect(!packaged.contains("/usr/local/"), "\(name)")
            #expect(
                packaged
                    == source.replacingOccurrences(
                        of: "/usr/local/bin/courier", with: "/usr/bin/courier"), "\(name)")
        }
        let service = try String(
            contentsOf: folder.appendingPathComponent("courier@.service"), encoding: .utf8)
        let starts = service.split(separator: "\n").filter { $0.hasPrefix("ExecStart=") }
        #expect(
            starts == [
                "ExecStart=/usr/bin/courier run /etc/courier/jobs/%i.json --no-progress $COURIER_OPTIONS"
            ])
    }

    /// The debug build keeps the toolchain's RUNPATH, an error lintian is right about and
    /// `make deb`'s static build does not have (its lintian run suppresses nothing).
    @Test(
        "lintian finds no error and no warning",
        .enabled(if: installed("lintian"), "lintian is not installed (make test-deps installs it)"))
    func lintian() async throws {
        let built = try await Self.built.value
        // lintian leaves a file of its own (`mldbm-elf-…`) in its temporary folder: this one
        // goes when the test ends, not into /tmp for good.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-lintian-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let result = try await CourierBinary.run(
            [
                "--fail-on", "error,warning", "--suppress-tags", "custom-library-search-path",
                built.deb.path,
            ], executable: URL(fileURLWithPath: "/usr/bin/lintian"),
            environment: ["TMPDIR": scratch.path])
        let tags = result.stdout.split(separator: "\n").filter {
            $0.hasPrefix("E:") || $0.hasPrefix("W:")
        }
        #expect(result.status == 0 && tags.isEmpty, "\(result.stdout)\(result.stderr)")
    }

    /// A root file system of the passwd, group, shadow and gshadow files alone, as postinst
    /// sees it under DPKG_ROOT.
    static func scratchRoot(passwd: String = "", group: String = "") throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-root-\(UUID().uuidString)")
        let etc = root.appendingPathComponent("etc")
        try FileManager.default.createDirectory(at: etc, withIntermediateDirectories: true)
        for (name, text, mode) in [
            ("passwd", "root:x:0:0:root:/root:/bin/bash\n" + passwd, 0o644),
            ("group", "root:x:0:\n" + group, 0o644),
            ("shadow", "root:*:20000:0:99999:7:::\n", 0o640),
            ("gshadow", "root:*::\n", 0o640),
        ] {
            let file = etc.appendingPathComponent(name)
            try text.write(to: file, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes(
                [.posixPermissions: mode], ofItemAtPath: file.path)
        }
        return root
    }

    static func postinst(_ root: URL) async throws {
        let control = try await built.value.control
        try await tool(
            "sh", [control.appendingPathComponent("postinst").path, "configure"],
            environment: ["DPKG_ROOT": root.path])
    }

    static func lines(_ root: URL, _ file: String, _ name: String) throws -> [[Substring]] {
        try String(contentsOf: root.appendingPathComponent("etc/\(file)"), encoding: .utf8)
            .split(separator: "\n").map {
                $0.split(separator: ":", omittingEmptySubsequences: false)
            }
            .filter { $0.first.map(String.init) == name }
    }

    @Test(
        "postinst makes the courier system user and its home once, however often it runs",
        .enabled(if: getuid() == 0, "useradd and chown need root"))
    func postinstMakesTheUserOnce() async throws {
        let root = try Self.scratchRoot()
        defer { try? FileManager.default.removeItem(at: root) }
        try await Self.postinst(root)
        let first = try String(
            contentsOf: root.appendingPathComponent("etc/passwd"), encoding: .utf8)
        try await Self.postinst(root)
        #expect(
            try String(contentsOf: root.appendingPathComponent("etc/passwd"), encoding: .utf8)
                == first)

        let users = try Self.lines(root, "passwd", "courier")
        try #require(users.count == 1, "\(users)")
        let user = users[0]
        let uid = try #require(Int(user[2]))
        #expect(uid > 0 && uid < 1000, "a system user: \(user)")
        #expect(user[5] == "/var/lib/courier" && user[6] == "/usr/sbin/nologin", "\(user)")
        #expect(try Self.lines(root, "group", "courier").count == 1)
        let home = try FileManager.default.attributesOfItem(
            atPath: root.appendingPathComponent("var/lib/courier").path)
        #expect(home[.ownerAccountID] as? Int == uid)
        #expect(home[.posixPermissions] as? Int == 0o750)
    }

    @Test(
        "postinst keeps a courier user made beforehand, as the image's 65532, and gives it a home",
        .enabled(if: getuid() == 0, "chown needs root"))
    func postinstKeepsAUserMadeBeforehand() async throws {
        let root = try Self.scratchRoot(
            passwd: "courier:x:65532:65532:courier jobs:/var/lib/courier:/usr/sbin/nologin\n",
            group: "courier:x:65532:\n")
        defer { try? FileManager.default.removeItem(at: root) }
        try await Self.postinst(root)
        #expect(try Self.lines(root, "passwd", "courier").map { $0[2] } == ["65532"])
        let home = try FileManager.default.attributesOfItem(
            atPath: root.appendingPathComponent("var/lib/courier").path)
        #expect(home[.ownerAccountID] as? Int == 65532)
    }

    @Test("postrm purge disables the courier instances a user enabled; remove keeps them")
    func postrmPurgeDisablesInstances() async throws {
        let root = try Self.scratchRoot()
        defer { try? FileManager.default.removeItem(at: root) }
        let wants = root.appendingPathComponent("etc/systemd/system/timers.target.wants")
        try FileManager.default.createDirectory(at: wants, withIntermediateDirectories: true)
        let links = ["courier@nightly.timer", "other@nightly.timer"]
        for name in links {
            try FileManager.default.createSymbolicLink(
                atPath: wants.appendingPathComponent(name).path,
                withDestinationPath: "/usr/lib/systemd/system/"
                    + name.replacingOccurrences(
                        of: "nightly", with: ""))
        }
        let control = try await Self.built.value.control
        func postrm(_ action: String) async throws {
            try await Self.tool(
                "sh", [control.appendingPathComponent("postrm").path, action],
                environment: ["DPKG_ROOT": root.path])
        }
        func present() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: wants.path).sorted()
        }
        try await postrm("remove")
        #expect(try present() == links, "a remove keeps the enablement for a reinstall")
        try await postrm("purge")
        #expect(try present() == ["other@nightly.timer"], "only courier's instances go")
    }
}
