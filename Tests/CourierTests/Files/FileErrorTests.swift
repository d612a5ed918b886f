import Foundation
import Testing

@testable import Courier

#if canImport(Glibc)
    import Glibc
#endif

/// A file error names the file by the path the user knows, even when the step reached it
/// through an open folder.
@Suite("FileError")
struct FileErrorTests {
    @Test("a file named through /proc/self/fd is named by its folder's path")
    func openFolderPathsAreShownAsTheFolder() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-file-error-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let descriptor = open(folder.path, O_RDONLY | O_DIRECTORY)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let error = FileError(
            path: "/proc/self/fd/\(descriptor)/.out.json.1234ABCD.tmp", action: "write",
            code: ENOSPC)
        let expected = folder.resolvingSymlinksInPath().path + "/.out.json.1234ABCD.tmp"
        if access("/proc/self/fd", F_OK) == 0 {
            #expect(error.path == expected)
            #expect(!error.description.contains("/proc/self"), "\(error)")
        }
    }

    @Test("other paths, and a descriptor that is not open, are left as given")
    func otherPathsStay() {
        #expect(FileError(path: "out/a.json", action: "write", code: EIO).path == "out/a.json")
        let closed = "/proc/self/fd/987654/x.tmp"
        #expect(FileError(path: closed, action: "write", code: EIO).path == closed)
        #expect(
            FileError(path: "/proc/self/fd/x/y", action: "write", code: EIO).path
                == "/proc/self/fd/x/y")
    }
}
