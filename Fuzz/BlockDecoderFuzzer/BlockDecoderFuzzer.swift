// libFuzzer target for FuzzHarness.block (stored record blocks) (make fuzz); built normally, it replays the files or folders it is given.
import PushTraceFuzzing

#if FUZZING
// SwiftPM links an executable's entry point under this name (main is defined as an alias of it).
@_cdecl("block_decoder_fuzzer_main")
func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    FuzzDriver.run(argc, argv) { data, size in
        FuzzHarness.block(UnsafeRawBufferPointer(start: data, count: size))
        return 0
    }
}
#else
@main
enum Replay {
    static func main() throws { try FuzzDriver.replay(CommandLine.arguments.dropFirst(), through: FuzzHarness.block) }
}
#endif
