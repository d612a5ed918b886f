import CourierTestSupport
import Foundation
import Testing

/// The size bars of issue 39, checked on the sources so that they hold after every change:
/// a reader can take in a file of `CourierJobs` and a function anywhere in one sitting, and
/// only what another module uses is `package`.
@Suite("Source shape")
struct SourceShapeTests {
    static let maxFileLines = 400
    static let maxFunctionLines = 80
    static let maxPackageDeclarations = 40

    @Test("no file of CourierJobs is over 400 lines")
    func fileLength() throws {
        for file in try Self.swiftFiles(under: "Sources/CourierJobs") {
            let lines = file.text.split(separator: "\n", omittingEmptySubsequences: false).count
            #expect(lines <= Self.maxFileLines, "\(file.path) has \(lines) lines")
        }
    }

    @Test("no function in Sources is over 80 lines, its declaration and closing brace counted")
    func functionLength() throws {
        let files = try Self.swiftFiles(under: "Sources")
        #expect(files.count > 100, "the sources were not found")
        for file in files {
            for function in Self.functions(in: FolderLayeringTests.code(file.text)) {
                #expect(
                    function.lines <= Self.maxFunctionLines,
                    "\(file.path):\(function.line) \(function.name) has \(function.lines) lines")
            }
        }
    }

    @Test("the scanner finds a long function, and not a body-less requirement")
    func scannerFindsLongFunctions() {
        let body = Array(repeating: "        x += 1", count: 81).joined(separator: "\n")
        let text = """
            protocol P {
                func required()
                var name: String { get }
            }
            struct S {
                func long() {
            \(body)
                }
                init(x: Int) { self.x = x }
            }
            """
        let found = Self.functions(in: text)
        #expect(found.map(\.name) == ["long", "init"])
        #expect(found.first?.lines == 83)
        #expect(found.last?.lines == 1)
    }

    @Test("package is only on what another module uses (at most 40 declarations in CourierJobs)")
    func packageDeclarations() throws {
        var count = 0
        for file in try Self.swiftFiles(under: "Sources/CourierJobs") {
            for line in FolderLayeringTests.code(file.text).split(separator: "\n") {
                let words = line.split(separator: " ").drop { $0.hasPrefix("@") }
                if words.first == "package" { count += 1 }
            }
        }
        #expect(count <= Self.maxPackageDeclarations, "\(count) package declarations")
    }

    /// Every Swift file under `folder` of the package, with its path from the package root.
    static func swiftFiles(under folder: String) throws -> [(path: String, text: String)] {
        let root = PackagePaths.root
        let base = root.appendingPathComponent(folder)
        guard let walker = FileManager.default.enumerator(atPath: base.path) else { return [] }
        var files: [(path: String, text: String)] = []
        while let relative = walker.nextObject() as? String {
            guard relative.hasSuffix(".swift") else { continue }
            let text = try String(
                contentsOf: base.appendingPathComponent(relative), encoding: .utf8)
            files.append(("\(folder)/\(relative)", text))
        }
        return files.sorted { $0.path < $1.path }
    }

    /// The functions, initializers and deinitializers with a body in `code` (strings and
    /// comments already taken out): where each starts and how many lines it spans.
    static func functions(in code: String) -> [(name: String, line: Int, lines: Int)] {
        let lines = code.split(separator: "\n", omittingEmptySubsequences: false)
        var found: [(name: String, line: Int, lines: Int)] = []
        for (index, line) in lines.enumerated() {
            guard let name = declaredFunction(line) else { continue }
            if let end = closingLine(of: index, in: lines) {
                found.append((name, index + 1, end - index + 1))
            }
        }
        return found
    }

    /// The name of the function a line declares, if it declares one.
    static func declaredFunction(_ line: Substring) -> String? {
        let modifiers: Set<Substring> = [
            "public", "package", "private", "fileprivate", "internal", "static", "final",
            "override", "mutating", "nonmutating", "nonisolated", "convenience", "required",
            "class", "private(set)", "indirect",
        ]
        let words = line.split(separator: " ").drop {
            $0.hasPrefix("@") || modifiers.contains($0)
        }
        guard let first = words.first else { return nil }
        if first == "func", words.count > 1 {
            return String(words.dropFirst().first!.prefix { $0 != "(" && $0 != "<" })
        }
        if first == "deinit" || first.hasPrefix("init(") || first.hasPrefix("init?(")
            || first.hasPrefix("init<") || first == "init"
        {
            return first == "deinit" ? "deinit" : "init"
        }
        return nil
    }

    /// The line whose brace closes the body that the declaration on line `start` opens;
    /// `nil` for a declaration without a body (a protocol's requirement).
    static func closingLine(of start: Int, in lines: [Substring]) -> Int? {
        var depth = 0
        var opened = false
        for index in start..<lines.count {
            let line = lines[index]
            if !opened, index > start {
                let trimmed = line.drop { $0 == " " }
                let startsAnother = ["@", "func ", "var ", "let ", "case ", "}", "static ", "init"]
                    .contains { trimmed.hasPrefix($0) }
                if trimmed.isEmpty || startsAnother { return nil }
            }
            for character in line {
                if character == "{" {
                    depth += 1
                    opened = true
                } else if character == "}" {
                    depth -= 1
                }
            }
            if opened, depth <= 0 { return index }
        }
        return nil
    }
}
