// The libFuzzer target for job-file loading: `make fuzz` builds it with
// `-sanitize=fuzzer,address -D JOBRUNNER_FUZZING` and runs it, seeded with every job file of the
// repository.
import Glibc
import JobRunnerCore
import JobRunnerYAML

/// The program: with libFuzzer linked in (`make fuzz`), libFuzzer's driver, which calls
/// ``fuzzJobFile(_:_:)`` with each input; without it (a plain `swift build`), a program that says
/// how to fuzz.
@main enum JobFileFuzzer {
    static func main() {
        #if JOBRUNNER_FUZZING
            var argc = CommandLine.argc
            var argv = CommandLine.unsafeArgv
            exit(runFuzzerDriver(&argc, &argv) { data, size in fuzzJobFile(data, size) })
        #else
            print("jobrunner-fuzz does nothing unless built by `make fuzz`, which links libFuzzer into it")
        #endif
    }
}

#if JOBRUNNER_FUZZING
    /// libFuzzer's entry for programs with a `main` of their own (SwiftPM gives every executable
    /// one, so libFuzzer's own `main` cannot be used).
    @_silgen_name("LLVMFuzzerRunDriver")
    func runFuzzerDriver(
        _ argc: UnsafeMutablePointer<CInt>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
    ) -> CInt
#endif

/// Loads one input as a job file and checks what every load must hold, whatever the input:
/// no crash, every problem one located line, at most the listed number per file, and a
/// workload exactly when there is no error.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzJobFile(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    // The loader refuses what is not UTF-8 before parsing; the fuzzer takes the same path.
    guard let text = String(validating: UnsafeBufferPointer(start: data, count: size), as: UTF8.self) else {
        return 0
    }
    let result = JobFileLoader.load(texts: [("fuzz.yaml", text)])
    let lines = text.utf8.count + 2
    for diagnostic in result.diagnostics {
        let line = diagnostic.description
        precondition(
            !line.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) },
            "a diagnostic with a control character: \(line)")
        precondition(line.hasPrefix("fuzz.yaml:\(diagnostic.location.line):\(diagnostic.location.column): "))
        precondition(
            (1...lines).contains(diagnostic.location.line) && diagnostic.location.column >= 1,
            "a diagnostic outside the file: \(line)")
    }
    precondition(
        result.diagnostics.count <= 51, "more problems listed than the cap: \(result.diagnostics.count)")
    precondition((result.workload == nil) == result.diagnostics.hasErrors)
    return 0
}
