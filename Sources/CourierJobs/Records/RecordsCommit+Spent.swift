import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The end of a commit: its spent parts removed, now or by the next commit of the same file
/// when a kill came between the rename and the removal.
extension RecordsCommit {
    /// Finishes what a killed commit of `target` left (step 4 of ``RecordsCommit``), or forgets it when its
    /// rename never happened.
    func finishEarlierCommit(in folder: URL, target: String) {
        let file = folder.appendingPathComponent(RecordsStore.commitName)
        guard let bytes = try? FileSystem.read(file, limit: 1 << 20) else { return }
        defer {
            unlink(file.path)
            FolderSyncs.fsyncFolder(folder.path)
        }
        guard case .success(let members) = StateDocument.members(of: bytes, kind: "commit record")
        else { return }
        var numbers: [String: Int] = [:]
        var lists: [String: Set<String>] = [:]
        for member in members {
            switch member.node.value {
            case .number(let value): numbers[member.key] = Int(exactly: value)
            case .array(let elements):
                for case .string(let text) in elements.map(\.value) {
                    lists[member.key, default: []].insert(text)
                }
            default: break
            }
        }
        var status = stat()
        let url = URL(fileURLWithPath: store.outputDir.path).appendingPathComponent(target)
        guard lstat(url.path, &status) == 0,
            numbers["device"] == Int(truncatingIfNeeded: status.st_dev),
            numbers["inode"] == Int(truncatingIfNeeded: status.st_ino),
            numbers["size"] == Int(status.st_size)
        else { return }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        if let spent = lists["parts"] {
            removeParts(in: folder, names: names.filter { spent.contains($0) })
        } else {
            // A record of an older courier names the runs whose parts it combined.
            let runs = lists["runs"] ?? []
            removeParts(
                in: folder,
                names: names.filter {
                    RecordsStore.parsePartName($0).map { runs.contains($0.run) } ?? false
                })
        }
        note(
            "\(target): finished the commit an interrupted run began (the records it had combined are in the file)"
        )
    }

    func removeParts(in folder: URL, names: [String]) {
        for name in names where RecordsStore.parsePartName(name) != nil {
            unlink(folder.appendingPathComponent(name).path)
        }
        FolderSyncs.fsyncFolder(folder.path)
    }
}
