import Foundation

/// Keeps `save` paths inside `outputDir`: the one place that decides.
enum OutputPath {
    /// Why `path` may not be used, or `nil` when it stays inside the output folder.
    ///
    /// Checked on bytes, as the file system reads the path: compared as `Character`s, a
    /// combining mark after `/` (`../\u{301}x`) makes `/\u{301}` one character, so the `..`
    /// before it was not seen as a component, while the file system climbed.
    static func problem(with path: String) -> String? {
        let bytes = Array(path.utf8)
        let slash = UInt8(ascii: "/")
        if bytes.isEmpty { return "may not be empty" }
        if bytes.first == slash || bytes.first == UInt8(ascii: "~") {
            return "must be relative to outputDir, found \"\(path)\""
        }
        if bytes.contains(0) { return "may not contain NUL" }
        let components = bytes.split(separator: slash, omittingEmptySubsequences: true)
        if components.contains(where: { $0.elementsEqual("..".utf8) }) {
            // Said as it is: climbing out, or not (trial FFF read "escapes" of `d/../x.txt`).
            var kept: [ArraySlice<UInt8>] = []
            for component in components where !component.elementsEqual(".".utf8) {
                guard component.elementsEqual("..".utf8) else {
                    kept.append(component)
                    continue
                }
                guard !kept.isEmpty else { return "escapes outputDir through \"..\": \"\(path)\"" }
                kept.removeLast()
            }
            let plain = kept.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "/")
            // A fix is suggested only when it is one (trial III: `d/..` was told to write "").
            let fix = problem(with: plain) == nil ? " (write it as \"\(plain)\")" : ""
            return "may not use \"..\", even within outputDir: \"\(path)\"\(fix)"
        }
        // `.` names a folder, not a file (trial III: `"save": "."` was refused only as it ran,
        // and `a/.` saved the file `a`).
        if components.isEmpty || bytes.last == slash
            || components.last?.elementsEqual(".".utf8) == true
        {
            return "must name a file, found \"\(path)\""
        }
        // Courier's own state, lock and kept captures: a value a server sent (`{id}` of
        // `.courier/state`) replaced them, and every later run refused to start (trial GG).
        if components.first(where: { !$0.elementsEqual(".".utf8) })?.elementsEqual(
            ".courier".utf8) == true
        {
            return "may not be inside .courier, which is courier's own folder: \"\(path)\""
        }
        return nil
    }

    /// The file URL for `path` under `folder`, or `nil` when it would escape, by its text or
    /// through a symbolic link inside the folder that points out of it.
    static func resolve(_ path: String, in folder: URL) -> URL? {
        guard problem(with: path) == nil else { return nil }
        let base = folder.standardizedFileURL
        let url = base.appendingPathComponent(path).standardizedFileURL
        guard url.path.hasPrefix(base.path + "/") else { return nil }
        // The deepest folder that exists already decides where the write really lands.
        var existing = url.deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: existing.path), existing.path != base.path,
            existing.pathComponents.count > 1
        {
            existing.deleteLastPathComponent()
        }
        let realBase = base.resolvingSymlinksInPath().path
        let realExisting = existing.resolvingSymlinksInPath().path
        guard realExisting == realBase || realExisting.hasPrefix(realBase + "/") else { return nil }
        return url
    }
}
