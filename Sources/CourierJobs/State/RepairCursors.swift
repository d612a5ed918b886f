/// The cursor a whole-job run of a `since` listing withheld because what its values fed did
/// not all end ok, kept beside the task's cursor as `ID#repair=RUN`.
///
/// The next night lists from the old cursor, and fetches those items again. But when a
/// `--resume` of the whole job completes the night instead (the listing's kept values, from
/// run `RUN`, stand in for it, and every task they fed ends done), the withheld value is what
/// the listing's cursor would have been: the resume moves the cursor to it, so the night after
/// does not fetch the repaired night's items a second time. Any new cursor or withheld value
/// of the task replaces it.
enum RepairCursors {
    /// The file key of `id`'s value withheld by `run`.
    static func key(_ id: String, run: String) -> String { "\(id)#repair=\(run)" }

    /// Whether a file key is a withheld value, not a cursor.
    static func isRepairKey(_ key: String) -> Bool { key.contains("#repair=") }

    /// Removes `id`'s withheld values from the file's entries.
    static func drop(_ id: String, in file: inout [String: String]) {
        let prefix = "\(id)#repair="
        for key in file.keys where key.hasPrefix(prefix) { file[key] = nil }
    }
}
