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

    /// The file URL for `path` under `folder`, or `nil` when it would escape.
    public static func resolve(_ path: String, in folder: URL) -> URL? {
        guard problem(with: path) == nil else { return nil }
        let base = folder.standardizedFileURL
        let url = base.appendingPathComponent(path).standardizedFileURL
        return url.path.hasPrefix(base.path + "/") ? url : nil
    }
}
