import Foundation

/// The two ways a fuzzer executable runs: under libFuzzer (built with `-DFUZZING -sanitize=fuzzer`), or built
/// normally, replaying the files it is given through the same harness.
public enum FuzzDriver {
    /// libFuzzer's test callback: one input, 0 to go on.
    public typealias TestOneInput = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

    #if FUZZING
        /// Hands the process over to libFuzzer's driver (`LLVMFuzzerRunDriver`) with `test` as the target.
        public static func run(
            _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>,
            _ test: TestOneInput
        ) -> CInt {
            var argc = argc
            var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
            return runFuzzerDriver(&argc, &argv, test)
        }
    #endif

    /// Runs every file given (a folder: every file in it) through `harness`.
    public static func replay(_ arguments: some Sequence<String>, through harness: (UnsafeRawBufferPointer) -> Void) throws {
        let files = try arguments.flatMap { path -> [String] in
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue else { return [path] }
            return try FileManager.default.contentsOfDirectory(atPath: path).sorted().map { path + "/" + $0 }
        }
        for file in files {
            try Data(contentsOf: URL(fileURLWithPath: file)).withUnsafeBytes { harness($0) }
        }
        print("replayed \(files.count) inputs")
    }
}

#if FUZZING
    @_silgen_name("LLVMFuzzerRunDriver")
    private func runFuzzerDriver(
        _ argc: UnsafeMutablePointer<CInt>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
        _ test: FuzzDriver.TestOneInput
    ) -> CInt
#endif
