import Testing

@testable import EventBus

/// Chains in the model-based battery: seeded random programs of chain operations (see
/// ChainModelProgram.swift, which the fuzz target runs too) against the reference model.
@Suite("Reliability: chain model-based random sequences", .offThePool)
struct ChainModelTests {
    @Test("Random chain programs deliver exactly what the reference model delivers, with the same outcomes")
    func randomProgramsMatchTheModel() {
        let seeds = environmentInt("EVENTBUS_MODEL_SEEDS") ?? 200
        let operations = environmentInt("EVENTBUS_MODEL_OPS") ?? 200
        var posts = 0
        var failures = 0
        for seed in 1...UInt64(seeds) {
            let ops = ChainModelProgram.generate(seed: seed, count: operations)
            if let failure = ChainModelProgram.check(ops, posts: &posts) {
                failures += 1
                Issue.record("seed \(seed): \(failure)")
                if failures >= 3 { break }
            }
        }
        print("chain model: \(seeds) seeds × \(operations) ops, \(posts) posts matched the model")
    }

    @Test("Decoding bytes uses the generator's grammar, and any bytes make a valid program")
    func decodedProgramsRun() {
        var random = SplitMix64(seed: 11)
        var posts = 0
        for length in [0, 1, 7, 64, 512] {
            let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            let ops = ChainModelProgram.decode(bytes)
            #expect(ops.count <= max(length, 0))
            #expect(ChainModelProgram.check(ops, posts: &posts) == nil)
        }
    }
}
