import Foundation

/// Keeps `save` paths inside `outputDir`: the one place that decides.
public enum OutputPath {
    /// Why `path` may not be used, or `nil` when it stays inside the output folder.
    public static func problem(with path: String) -> String? {
        if path.isEmpty { return "may not be empty" }
        if path.hasPrefix("/") || path.hasPrefix("~") {
            return "must be relative to outputDir, found \"\(path)\""
        }
        if path.contains("\0") { return "may not contain NUL" }
        let components = path.split(separator: "/", omittingEmptySubsequences: true)
        if components.contains("..") { return "escapes outputDir through \"..\": \"\(path)\"" }
        if components.isEmpty || path.hasSuffix("/") {
            return "must name a file, found \"\(path)\""
        }
        return nil
    }

    /// The file URL for `path` under `folder`, or `nil` when it would escape, by its text or
    /// through a symbolic link inside the folder that points out of it.
    public static func resolve(_ path: String, in folder: URL) -> URL? {
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
