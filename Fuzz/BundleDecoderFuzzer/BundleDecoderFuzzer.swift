// libFuzzer target for FuzzHarness.bundle (make fuzz). Built with -DFUZZING -sanitize=fuzzer, its entry point hands
// over to libFuzzer's driver; built normally (swift build), it replays the files or folders given as arguments
// through the same harness.
import Foundation
import PushTraceFuzzing

#if FUZZING
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(_ argc: UnsafeMutablePointer<CInt>,
                     _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                     _ test: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt

// SwiftPM links an executable's entry point under this name (main is defined as an alias of it).
@_cdecl("bundle_decoder_fuzzer_main")
func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return runFuzzerDriver(&argc, &argv) { data, size in
        FuzzHarness.bundle(UnsafeRawBufferPointer(start: data, count: size))
        return 0
    }
}
#else
@main
enum Replay {
    static func main() throws {
        let files = try CommandLine.arguments.dropFirst().flatMap { path -> [String] in
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue else { return [path] }
            return try FileManager.default.contentsOfDirectory(atPath: path).sorted().map { path + "/" + $0 }
        }
        for file in files {
            try Data(contentsOf: URL(fileURLWithPath: file)).withUnsafeBytes { FuzzHarness.bundle($0) }
        }
        print("replayed \(files.count) inputs through FuzzHarness.bundle")
    }
}
#endif
