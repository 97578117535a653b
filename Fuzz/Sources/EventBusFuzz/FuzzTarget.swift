// libFuzzer entry point: the input bytes are decoded into an operation program with the same grammar
// as the model-based test's seeded generator, run on a real bus and on the reference model, and any
// disagreement aborts with the program listing (libFuzzer then saves the input as a crash file).
// The same bytes are also decoded as a chain program (ChainModelProgram.swift: mount, unmount,
// subscribe, intercept, dispose, post on event nodes) and checked against the chain model.

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
    let chainOps = ChainModelProgram.decode(bytes)
    var posts = 0
    if let failure = ChainModelProgram.check(chainOps, posts: &posts) {
        fputs("EventBus chain model mismatch (\(chainOps.count) ops): \(failure)\n", stderr)
        abort()
    }
    return 0
}
