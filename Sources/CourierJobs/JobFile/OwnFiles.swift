import Foundation

/// The job's own files that lie under its output folder, as paths relative to it: the job
/// file and its log folder (`logs/NAME` in its home). With `"outputDir": "."`, a `save` of
/// `self.json` replaced the job file, and the next run could not read it; one under
/// `logs/NAME/` wrote into the job's history, which every `report` then read (trial LLL). A
/// path that names one is refused as `.courier` is: written in the job file when it is
/// validated, put there by a value when the task is built.
enum OwnFiles {
    /// The job file and the log folder, relative to `outputDir`, those that lie under it.
    static func under(_ outputDir: String, file: URL, logs: URL) -> [String] {
        let root = URL(fileURLWithPath: outputDir).standardizedFileURL.path + "/"
        return [file, logs].map { $0.standardizedFileURL.path }.compactMap { path in
            path.hasPrefix(root) ? String(path.dropFirst(root.count)) : nil
        }
    }

    /// Why `path` (canonical, relative to `outputDir`) may not be written: it is the job file,
    /// or inside the log folder. `nil` otherwise, and always for a job with none under its
    /// output folder.
    static func problem(_ path: String, own: [String]) -> String? {
        for file in own where path == file || path.hasPrefix(file + "/") {
            return "is the job's own file or log folder (\(file)), which no output may replace"
        }
        return nil
    }
}
