// libFuzzer entry point: the input bytes are decoded into an operation program with the same grammar
// as the model-based test's seeded generator, run on a real bus and on the reference model, and any
// disagreement aborts with the program listing (libFuzzer then saves the input as a crash file).

#if canImport(Glibc)
    @preconcurrency import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let ops = ModelProgram.decode(bytes)
    if let failure = ModelProgram.check(ops) {
        fputs("EventBus model mismatch (\(ops.count) ops): \(failure)\n", stderr)
        abort()
    }
    return 0
}
