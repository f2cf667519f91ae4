// swift-tools-version:6.0
// The on-device agent alone, for iOS apps: the root manifest carries the server, whose dependencies need a newer
// Swift than Xcode 16 ships. Its sources are the root package's own (Sources/…, linked here), so the two cannot
// drift; `make test` builds this package on Linux and type-checks its Apple-only code (scripts/check-apple-build.sh).
import PackageDescription

let package = Package(
    name: "PushTraceAgent",
    platforms: [.iOS(.v15), .macOS(.v12)],
    products: [
        .library(name: "PushTraceAgentApp", targets: ["PushTraceAgentApp"]),  // for the app
        .library(name: "PushTraceAgent", targets: ["PushTraceAgent"]),  // extension-safe: the two extensions
    ],
    targets: [
        // zlib, which every Apple platform ships (and Debian's zlib1g-dev on Linux).
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        .target(name: "PushTraceRecords"),
        .target(name: "PushTraceGzip", dependencies: ["CZlib"]),
        .target(name: "PushTraceAgent", dependencies: ["PushTraceRecords", "PushTraceGzip"],
                resources: [.copy("PrivacyInfo.xcprivacy")]),
        .target(name: "PushTraceAgentApp", dependencies: ["PushTraceAgent"]),
    ],
    swiftLanguageModes: [.v6]
)
