// swift-tools-version:6.2
import PackageDescription

/// Every dependency on another package is the server's, the CLI's or the tests': none is the agent's. Behind the
/// `Server` trait (on by default), an app that depends on this package with `traits: []` and uses only
/// `PushTraceAgent` neither fetches nor builds any of them (SwiftPM 6.1 and later; docs/agent.md).
let server = TargetDependencyCondition.when(traits: ["Server"])

let package = Package(
    name: "pushtrace",
    platforms: [.macOS(.v14), .iOS(.v15)],
    products: [
        .executable(name: "pushtrace", targets: ["pushtrace"]),
        .library(name: "PushTraceRecords", targets: ["PushTraceRecords"]),
        .library(name: "PushTraceCore", targets: ["PushTraceCore"]),
        .library(name: "PushTraceStore", targets: ["PushTraceStore"]),
        .library(name: "PushTraceSQLite", targets: ["PushTraceSQLite"]),
        .library(name: "PushTracePostgres", targets: ["PushTracePostgres"]),
        // The agent: PushTraceAgentApp for the app, the extension-safe PushTraceAgent for its two extensions.
        .library(name: "PushTraceAgentApp", targets: ["PushTraceAgentApp"]),
        .library(name: "PushTraceAgent", targets: ["PushTraceAgent"]),
    ],
    traits: [
        .trait(name: "Server", description: "The server, the CLI and their stores (SQLite, PostgreSQL): every package dependency."),
        .default(enabledTraits: ["Server"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
    ],
    targets: [
        // zlib from the system (Debian's zlib1g-dev): streaming gzip/deflate.
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        // The record vocabulary of docs/spec.md §2–§4, shared by the agent and the server. Foundation only.
        .target(name: "PushTraceRecords"),
        // Streaming gzip over zlib (which every Apple platform ships too): the agent writes bundles, the server reads them.
        .target(name: "PushTraceGzip", dependencies: ["CZlib"]),
        // Bundle decoding, correlation keys, clock correction, diagnosis, reports and alert rules (read from YAML).
        // No database, no network.
        .target(
            name: "PushTraceCore",
            dependencies: [
                "PushTraceRecords", "PushTraceGzip", .product(name: "Yams", package: "Yams", condition: server),
            ]),
        // The on-device library: the app and its two extensions record into the App Group container; the app uploads.
        // Foundation (and FoundationNetworking on Linux) and the system zlib only.
        // Its own manifest, Agent/Package.swift (tools 6.0, for Xcode 16), builds the same sources.
        .target(
            name: "PushTraceAgent", dependencies: ["PushTraceRecords", "PushTraceGzip"],
            resources: [.copy("PrivacyInfo.xcprivacy")]),
        // What only an app may call (UIApplication's background time, BGTaskScheduler), over the extension-safe agent.
        .target(name: "PushTraceAgentApp", dependencies: ["PushTraceAgent"]),
        // A stand-in for an app's processes in the agent's tests: records as one process kind, in its own OS process.
        .executableTarget(
            name: "pushtrace-agent-probe", dependencies: ["PushTraceAgent"],
            path: "Tests/PushTraceAgentProbe"),
        // The bundle decoder as the fuzzers drive it, with invariants; the regression tests replay crashers through it.
        .target(name: "PushTraceFuzzing", dependencies: ["PushTraceCore", "PushTraceRecords", "PushTraceGzip"]),
        // libFuzzer targets (make fuzz builds them with -sanitize=fuzzer); built normally, they replay inputs.
        .executableTarget(name: "bundle-decoder-fuzzer", dependencies: ["PushTraceFuzzing"], path: "Fuzz/BundleDecoderFuzzer"),
        .executableTarget(name: "record-decoder-fuzzer", dependencies: ["PushTraceFuzzing"], path: "Fuzz/RecordDecoderFuzzer"),
        .executableTarget(name: "block-decoder-fuzzer", dependencies: ["PushTraceFuzzing"], path: "Fuzz/BlockDecoderFuzzer"),
        // Realistic simulated bundles for the demo, the tests and the benchmarks.
        .target(name: "PushTraceSimulator", dependencies: ["PushTraceCore", "PushTraceRecords", "PushTraceGzip"]),
        // sqlite3_config, which Swift cannot call (a variadic C function), for the store's process-wide settings.
        .systemLibrary(name: "CSQLiteSettings", providers: [.apt(["libsqlite3-dev"])]),
        // glibc's malloc_trim, for the server's upload memory (Linux only).
        .systemLibrary(name: "CGlibcMalloc"),
        // The store's interface (protocols and plain values, no database type) and what every engine shares: the
        // per-notification summaries and rollup deltas, computed once here, record blocks and their dictionaries,
        // reading stored lines back, tokens, and the file ingest pipeline.
        .target(
            name: "PushTraceStore",
            dependencies: [
                "PushTraceCore", "PushTraceRecords", "PushTraceGzip",
                .product(name: "Crypto", package: "swift-crypto", condition: server),
            ]),
        // The SQLite engine behind that interface (GRDB over the system libsqlite3): the default, embedded store.
        .target(
            name: "PushTraceSQLite",
            dependencies: [
                "PushTraceCore", "PushTraceRecords", "PushTraceStore", "CSQLiteSettings",
                .product(name: "GRDB", package: "GRDB.swift", condition: server),
                // SQLite's C API, for the checkpointer's WAL hook (Checkpointer.swift).
                .product(name: "GRDBSQLite", package: "GRDB.swift", condition: server),
            ]),
        // The PostgreSQL engine behind the same interface (postgres-nio): one database shared by many servers (docs/spec.md §9).
        .target(
            name: "PushTracePostgres",
            dependencies: [
                "PushTraceCore", "PushTraceRecords", "PushTraceStore",
                .product(name: "PostgresNIO", package: "postgres-nio", condition: server),
                .product(name: "NIOCore", package: "swift-nio", condition: server),
                .product(name: "NIOPosix", package: "swift-nio", condition: server),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: server),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio", condition: server),
                .product(name: "Logging", package: "swift-log", condition: server),
            ]),
        // The HTTP server (docs/spec.md §8): ingestion through the store's one writer, reads, tokens, metrics. It knows the
        // store's interface only; the command that serves picks the engine.
        // The console's pages (docs/console.md): Mustache templates, SVG charts drawn in Swift, one static script, all
        // compiled into the binary.
        .target(
            name: "PushTraceConsole",
            dependencies: [
                "PushTraceCore", "PushTraceStore", "PushTraceRecords",
                .product(name: "Mustache", package: "swift-mustache", condition: server),
            ],
            resources: [
                .embedInCode("Templates"),
                .embedInCode("Static"),
            ]),
        .target(
            name: "PushTraceServer",
            dependencies: [
                "PushTraceCore", "PushTraceStore", "PushTraceRecords", "PushTraceConsole",
                .target(name: "CGlibcMalloc", condition: .when(platforms: [.linux])),
                .product(name: "Hummingbird", package: "hummingbird", condition: server),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: server),
                .product(name: "Logging", package: "swift-log", condition: server),
                .product(name: "Metrics", package: "swift-metrics", condition: server),
                .product(name: "Prometheus", package: "swift-prometheus", condition: server),
                .product(name: "NIOCore", package: "swift-nio", condition: server),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio", condition: server),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: server),
                .product(name: "NIOPosix", package: "swift-nio", condition: server),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras", condition: server),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: server),
            ],
            resources: [
                // The OpenAPI document (openapi.json at the top of the repository links to it), compiled into the
                // binary for GET /openapi.json: no resource bundle to install beside the server.
                .embedInCode("openapi.json")
            ]),
        .executableTarget(
            name: "pushtrace",
            dependencies: [
                "PushTraceCore", "PushTraceStore", "PushTraceSQLite", "PushTracePostgres", "PushTraceSimulator", "PushTraceRecords",
                "PushTraceServer", "PushTraceConsole",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: server),
                .product(name: "Logging", package: "swift-log", condition: server),
                .product(name: "NIOCore", package: "swift-nio", condition: server),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: server),
            ]),
        // A load generator for the crash test and the HTTP benchmark: many concurrent uploaders of bundle files.
        .executableTarget(
            name: "pushtrace-load",
            dependencies: [
                "PushTraceGzip",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: server),
                .product(name: "NIOCore", package: "swift-nio", condition: server),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: server),
                .product(name: "NIOPosix", package: "swift-nio", condition: server),
            ]),
        // Helpers shared by the test targets: temporary stores and small hand-written bundles.
        .target(
            name: "PushTraceTestSupport",
            dependencies: [
                "PushTraceStore", "PushTraceSQLite", "PushTracePostgres",
                "PushTraceCore", "PushTraceSimulator",
            ],
            path: "Tests/PushTraceTestSupport"),
        .testTarget(
            name: "PushTraceCoreTests",
            dependencies: [
                "PushTraceCore", "PushTraceRecords", "PushTraceGzip", "PushTraceSimulator",
                "PushTraceFuzzing",
            ],
            resources: [.copy("FuzzCrashers")]),
        .testTarget(
            name: "PushTraceAgentTests",
            dependencies: [
                "PushTraceAgent", "PushTraceAgentApp", "PushTraceRecords", "PushTraceGzip", "pushtrace-agent-probe",
            ]),
        // The store-interface suite: every test runs against each engine (TestEngine.all).
        .testTarget(
            name: "PushTraceStoreTests",
            dependencies: [
                .product(name: "GRDB", package: "GRDB.swift", condition: server),
                "PushTraceStore", "PushTraceCore", "PushTraceSimulator", "PushTraceRecords", "PushTraceTestSupport",
                "PushTraceGzip", "PushTracePostgres", "PushTraceSQLite",
                .product(name: "PostgresNIO", package: "postgres-nio", condition: server),
            ], exclude: ["Golden"]),  // read by path (ReportInterfaceTests), not bundled as resources
        // What only the SQLite engine has: its schema and migrations, blocks, conversion, checkpoints, the backlog.
        .testTarget(
            name: "PushTraceSQLiteTests",
            dependencies: [
                .product(name: "GRDB", package: "GRDB.swift", condition: server),
                "PushTraceSQLite", "PushTraceStore", "PushTraceCore", "PushTraceSimulator", "PushTraceRecords",
                "PushTraceTestSupport", "PushTraceGzip",
            ]),
        .testTarget(name: "PushTraceConsoleTests", dependencies: ["PushTraceConsole", "PushTraceCore", "PushTraceRecords"]),
        .testTarget(
            name: "PushTraceServerTests",
            dependencies: [
                "PushTraceServer", "PushTraceStore", "PushTraceSQLite", "PushTracePostgres", "PushTraceCore", "PushTraceSimulator",
                "PushTraceRecords", "PushTraceTestSupport", "PushTraceGzip",
                .product(name: "HummingbirdTesting", package: "hummingbird", condition: server),
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: server),
                .product(name: "GRDB", package: "GRDB.swift", condition: server),
            ]),
        .testTarget(
            name: "PushTraceCLITests",
            dependencies: [
                "pushtrace", "PushTraceSimulator", "PushTraceCore", "PushTraceGzip", "PushTraceAgent", "pushtrace-agent-probe",
                "PushTracePostgres", "PushTraceTestSupport",
                .product(name: "Hummingbird", package: "hummingbird", condition: server),
                .product(name: "HummingbirdTesting", package: "hummingbird", condition: server),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio", condition: server),
                .product(name: "GRDB", package: "GRDB.swift", condition: server),
            ], exclude: ["Fixtures"]),  // read by path (HostileInputCLITests), not bundled as resources
    ],
    swiftLanguageModes: [.v6]
)
