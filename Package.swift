// swift-tools-version:6.0
import PackageDescription

// `COURIER_PACKAGE_SCOPE=transport` leaves out the runner, the CLI and their tests: the thread
// sanitizer's pass in `make test` checks the library and both transports, and building the
// runner under it too took three of CI's ten minutes. Any other value, or none, is the package.
let transportOnly = Context.environment["COURIER_PACKAGE_SCOPE"] == "transport"

let runnerTargets: Set<String> = [
    "CBuildInfo", "CourierJobs", "courier", "CFuzzDriver", "courier-fuzz", "courier-rawloop",
    "CourierJobsTests", "SeedStyleTests", "CLITests",
]

// No package dependencies by design: Foundation, Dispatch, Glibc, the test frameworks that ship
// with the toolchain, the system libcurl (Debian `libcurl4-openssl-dev`) and the decoders it
// links too (zlib, and `libbrotli-dev`, `libzstd-dev` for their headers).
let package = Package(
    name: "Courier",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "Courier", targets: ["Courier"]),
        .library(name: "CourierCurl", targets: ["CourierCurl"]),
        .library(name: "CourierTesting", targets: ["CourierTesting"]),
    ] + (transportOnly ? [] : [.executable(name: "courier", targets: ["courier"])]),
    targets: [
        // The system libcurl, located with pkg-config; SwiftPM names the package to install
        // when it is missing.
        .systemLibrary(
            name: "CLibcurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"]), .brew(["curl"])]
        ),
        // The brotli and zstd decoders the system libcurl links; CCurl decodes `br` and `zstd`
        // bodies with them.
        .systemLibrary(
            name: "CBrotliDec",
            pkgConfig: "libbrotlidec",
            providers: [.apt(["libbrotli-dev"]), .brew(["brotli"])]
        ),
        .systemLibrary(
            name: "CZstd",
            pkgConfig: "libzstd",
            providers: [.apt(["libzstd-dev"]), .brew(["zstd"])]
        ),
        // zlib (which libcurl links too) decodes gzip and deflate bodies, libbrotlidec br and
        // libzstd zstd: CCurlDecode.h says why the transport decodes them, not libcurl.
        .target(
            name: "CCurl", dependencies: ["CLibcurl", "CBrotliDec", "CZstd"],
            linkerSettings: [.linkedLibrary("z")]),
        .target(name: "Courier"),
        .target(name: "CourierCurl", dependencies: ["Courier", "CCurl"]),
        // Test doubles for users' own tests: a stub transport, a mock API client, a clock.
        .target(name: "CourierTesting", dependencies: ["Courier"]),
        // The git commit `make` builds from, for `courier --version` (CBuildInfo.h says how).
        .target(name: "CBuildInfo"),
        .target(name: "CourierJobs", dependencies: ["Courier", "CourierCurl", "CBuildInfo"]),
        .executableTarget(name: "courier", dependencies: ["CourierJobs"]),
        // Fuzz targets (`make fuzz`); built plainly, it replays a corpus.
        .target(name: "CFuzzDriver"),
        .executableTarget(
            name: "courier-fuzz", dependencies: ["CourierJobs", "CourierCurl", "CFuzzDriver"]),
        // The reference `make bench` measures against: a bare libcurl multi loop, no Courier.
        .executableTarget(name: "courier-rawloop", dependencies: ["CCurl"]),
        .target(
            name: "CourierTestSupport",
            dependencies: ["Courier", "CourierCurl"],
            path: "Tests/Support"
        ),
        .testTarget(
            name: "CourierTests", dependencies: ["Courier", "CourierTesting", "CourierTestSupport"]),
        .testTarget(name: "CourierCurlTests", dependencies: ["CourierCurl", "CourierTestSupport"]),
        .testTarget(
            name: "CourierJobsTests",
            dependencies: ["CourierJobs", "CourierTesting", "CourierTestSupport"]),
        .testTarget(
            name: "ConformanceTests",
            dependencies: ["Courier", "CourierCurl", "CourierTestSupport"]
        ),
        // Code written the way seed articles 000 and 001 write it, run against a real server.
        .testTarget(
            name: "SeedStyleTests",
            dependencies: ["Courier", "CourierCurl", "CourierTestSupport"],
            exclude: ["MyService/README.md"]
        ),
        .testTarget(
            name: "CLITests", dependencies: ["courier", "CourierJobs", "CourierTestSupport"],
            exclude: ["BadJobs"]),
    ].filter { !transportOnly || !runnerTargets.contains($0.name) },
    swiftLanguageModes: [.v6]
)
