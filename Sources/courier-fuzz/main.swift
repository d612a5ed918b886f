// courier-fuzz TARGET [inputs or libFuzzer options]
//
// Built by `make fuzz` with -sanitize=fuzzer,address and -DFUZZING, it is a libFuzzer binary
// for one of the targets below. Built plainly (as `swift build` does), it runs the files and
// folders it is given through the target once each, which replays a corpus or a crash.
#if FUZZING
    import CFuzzDriver
#endif
import Courier
@_spi(Fuzzing) import CourierCurl
import CourierJobs
import Foundation

typealias Callback = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

let targets: [String: Callback] = [
    "jobfile": { data, size in
        JobsFuzzing.jobFile(Data(bytes: data ?? UnsafePointer(bitPattern: 1)!, count: size))
        return 0
    },
    "template": { data, size in
        JobsFuzzing.template(Data(bytes: data ?? UnsafePointer(bitPattern: 1)!, count: size))
        return 0
    },
    "logline": { data, size in
        JobsFuzzing.logLine(Data(bytes: data ?? UnsafePointer(bitPattern: 1)!, count: size))
        return 0
    },
    "headers": { data, size in
        CurlFuzzing.headerLines(UnsafeRawBufferPointer(start: data, count: size))
        return 0
    },
    "events": { data, size in
        StreamFuzzing.events(Data(bytes: data ?? UnsafePointer(bitPattern: 1)!, count: size))
        return 0
    },
]

var arguments = CommandLine.arguments
guard arguments.count >= 2, let callback = targets[arguments[1]] else {
    FileHandle.standardError.write(
        Data(
            "usage: courier-fuzz \(targets.keys.sorted().joined(separator: "|")) [inputs…]\n".utf8
        ))
    exit(2)
}
arguments.remove(at: 1)

#if FUZZING
    var argc = CInt(arguments.count)
    var argv = arguments.map { strdup($0) }
    argv.append(nil)
    let status = argv.withUnsafeMutableBufferPointer { buffer in
        var pointer = buffer.baseAddress
        return LLVMFuzzerRunDriver(&argc, &pointer, callback)
    }
    exit(status)
#else
    var count = 0
    for path in arguments.dropFirst() {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            FileHandle.standardError.write(Data("courier-fuzz: no such file: \(path)\n".utf8))
            exit(2)
        }
        let files =
            isFolder.boolValue
            ? ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted().map {
                path + "/" + $0
            } : [path]
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else { continue }
            _ = data.withUnsafeBytes { bytes in
                callback(bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count)
            }
            count += 1
        }
    }
    print("courier-fuzz: \(count) inputs, no finding")
#endif
