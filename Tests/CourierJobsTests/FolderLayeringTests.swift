import CourierTestSupport
import Foundation
import Testing

/// The folders of each module depend one way: a file may use the types of its own folder and
/// of the folders below it in the module's order (docs/architecture.md), never of one above.
/// A type used "upwards" is a misplaced type or a cycle; move it down, or split it.
@Suite("Folder layering")
struct FolderLayeringTests {
    /// Each module's folders, lowest first.
    static let layers: [(module: String, folders: [String])] = [
        (
            "Courier",
            [
                "Support", "JSON", "Cookies", "HTTP", "Files", "Caching", "Middleware", "Auth",
                "Transports", "Pagination", "Streaming", "API",
            ]
        ),
        (
            "CourierJobs",
            [
                "Support", "Secrets", "Durability", "JobFile", "Records", "State", "Pages",
                "LogFormat", "LogReading", "Metrics", "Recording", "Log", "Replay", "Runner",
                "Report", "Export",
                "Bench",
                "CLI",
            ]
        ),
    ]

    @Test("no folder uses a type of a folder above it", arguments: layers.map(\.module))
    func oneWay(module: String) throws {
        let order = try #require(Self.layers.first { $0.module == module }?.folders)
        let root = PackagePaths.root.appendingPathComponent("Sources/\(module)")
        let folders = try FileManager.default.contentsOfDirectory(atPath: root.path).filter {
            var directory: ObjCBool = false
            return FileManager.default.fileExists(
                atPath: root.appendingPathComponent($0).path, isDirectory: &directory)
                && directory.boolValue && !$0.hasSuffix(".docc")
        }
        for folder in folders {
            #expect(order.contains(folder), "\(module)/\(folder) has no place in the order")
        }
        var sources: [String: [(file: String, text: String)]] = [:]
        var owner: [String: String] = [:]
        for folder in order {
            let files =
                (try? FileManager.default.contentsOfDirectory(
                    atPath: root.appendingPathComponent(folder).path)) ?? []
            for file in files.sorted() where file.hasSuffix(".swift") {
                let raw = try String(
                    contentsOf: root.appendingPathComponent("\(folder)/\(file)"), encoding: .utf8)
                let text = Self.code(raw)
                sources[folder, default: []].append((file, text))
                for name in Self.declaredTypes(text) where owner[name] == nil {
                    owner[name] = folder
                }
            }
        }
        var upward: [String] = []
        for (level, folder) in order.enumerated() {
            for (file, text) in sources[folder] ?? [] {
                for name in Self.capitalizedWords(text) {
                    guard let home = owner[name], let homeLevel = order.firstIndex(of: home),
                        homeLevel > level
                    else { continue }
                    upward.append("\(folder)/\(file) uses \(name) from \(home)")
                }
            }
        }
        #expect(upward.isEmpty, "\(upward.sorted().joined(separator: "\n"))")
    }

    /// The source without comments and string literals (where a type name is not a use).
    static func code(_ text: String) -> String {
        var result = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var kept = ""
            var inString = false
            var escaped = false
            var previous: Character = " "
            var iterator = line.makeIterator()
            while let character = iterator.next() {
                if !inString, character == "/", previous == "/" {
                    kept.removeLast()
                    break
                }
                // A backslash in a string escapes the next character, itself included.
                if inString, escaped {
                    escaped = false
                } else if inString, character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    inString.toggle()
                }
                if !inString { kept.append(character) }
                previous = character
            }
            result += kept + "\n"
        }
        return result
    }

    /// Names of the types a file declares at its top level.
    static func declaredTypes(_ text: String) -> [String] {
        let kinds: Set<Substring> = ["struct", "class", "enum", "protocol", "actor", "typealias"]
        var names: [String] = []
        for line in text.split(separator: "\n") where !(line.first?.isWhitespace ?? true) {
            let words = line.split { !$0.isLetter && !$0.isNumber && $0 != "_" }
            if let index = words.firstIndex(where: { kinds.contains($0) }), index + 1 < words.count,
                words[index + 1].first?.isUppercase == true
            {
                names.append(String(words[index + 1]))
            }
        }
        return names
    }

    static func capitalizedWords(_ text: String) -> Set<String> {
        Set(
            text.split { !$0.isLetter && !$0.isNumber && $0 != "_" }.filter {
                $0.first?.isUppercase == true
            }.map(String.init))
    }
}
