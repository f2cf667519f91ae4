// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "pushtrace",
    platforms: [.macOS(.v14), .iOS(.v15)],
    products: [
        .executable(name: "pushtrace", targets: ["pushtrace"]),
        .library(name: "PushTraceRecords", targets: ["PushTraceRecords"]),
        .library(name: "PushTraceCore", targets: ["PushTraceCore"]),
        .library(name: "PushTraceStore", targets: ["PushTraceStore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // zlib from the system (Debian's zlib1g-dev): streaming gzip/deflate.
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        // The record vocabulary of SPEC §2–§4, shared by the agent and the server. Foundation only.
        .target(name: "PushTraceRecords"),
        // Bundle decoding, correlation keys, clock correction and diagnosis. No database, no network.
        .target(name: "PushTraceCore", dependencies: ["PushTraceRecords", "CZlib"]),
        // Realistic simulated bundles for the demo, the tests and the benchmarks.
        .target(name: "PushTraceSimulator", dependencies: ["PushTraceCore", "PushTraceRecords"]),
        // SQLite storage (GRDB over the system libsqlite3).
        .target(name: "PushTraceStore", dependencies: [
            "PushTraceCore", "PushTraceRecords",
            .product(name: "GRDB", package: "GRDB.swift"),
        ]),
        .executableTarget(name: "pushtrace", dependencies: [
            "PushTraceCore", "PushTraceStore", "PushTraceSimulator", "PushTraceRecords",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .testTarget(name: "PushTraceCoreTests", dependencies: ["PushTraceCore", "PushTraceRecords"]),
        .testTarget(name: "PushTraceStoreTests", dependencies: [
            .product(name: "GRDB", package: "GRDB.swift"),
            "PushTraceStore", "PushTraceCore", "PushTraceSimulator", "PushTraceRecords",
        ]),
        .testTarget(name: "PushTraceCLITests", dependencies: ["pushtrace", "PushTraceSimulator", "PushTraceCore"]),
    ],
    swiftLanguageModes: [.v6]
)
