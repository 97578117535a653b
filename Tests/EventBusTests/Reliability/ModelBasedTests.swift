import Testing

@testable import EventBus
@testable import EventBusFoundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Battery item 5: seeded random programs against the reference model in ModelProgram.swift.
@Suite("Reliability: model-based random sequences", .offThePool)
struct ModelBasedTests {
    /// `EVENTBUS_MODEL_SEEDS` (default 200) programs of `EVENTBUS_MODEL_OPS` (default 300) operations;
    /// `EVENTBUS_MODEL_SEED=n` runs seed n alone.
    static let seeds = environmentInt("EVENTBUS_MODEL_SEEDS") ?? 200
    static let onlySeed = environmentInt("EVENTBUS_MODEL_SEED").map(UInt64.init)
    static let operations = environmentInt("EVENTBUS_MODEL_OPS") ?? 300

    @Test("Random programs deliver exactly what the reference model delivers, with the same counts")
    func randomProgramsMatchTheModel() {
        var deliveries = 0
        var opsByKind: [String: Int] = [:]
        var failures = 0
        var supertypeOps = 0
        let seeds = Self.onlySeed.map { $0...$0 } ?? 1...UInt64(Self.seeds)
        for seed in seeds {
            let ops = ModelProgram.generate(seed: seed, count: Self.operations)
            for op in ops {
                opsByKind[String("\(op)".prefix { $0 != "(" }), default: 0] += 1
                if "\(op)".contains("activity") { supertypeOps += 1 }
            }
            if let failure = ModelProgram.check(ops, deliveries: &deliveries) {
                failures += 1
                Issue.record("seed \(seed) (rerun: EVENTBUS_MODEL_SEED=\(seed)): \(failure)")
                if failures >= 3 { break }
            }
        }
        let mix = opsByKind.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        print(
            "model: \(seeds.count) seeds × \(Self.operations) ops, \(deliveries) deliveries matched; ops: \(mix); "
                + "\(supertypeOps) of them subscribe to the supertype")
    }

    @Test("Decoding bytes uses the generator's grammar, and any bytes make a valid program")
    func decodingIsTotal() {
        #expect(ModelProgram.decode([]).isEmpty)
        var random = SplitMix64(seed: 7)
        for length in [1, 2, 17, 300, 5000] {
            let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            let ops = ModelProgram.decode(bytes)
            #expect(!ops.isEmpty && ops.count <= ModelProgram.maxDecodedOps)
            #expect(ModelProgram.check(ops) == nil)
        }
    }
}

/// An integer from the environment, or `nil` when unset or malformed.
func environmentInt(_ name: String) -> Int? {
    guard let raw = getenv(name) else { return nil }
    return Int(String(cString: raw))
}

/// Whether an environment variable is set to a non-empty value other than "0".
func environmentFlag(_ name: String) -> Bool {
    guard let raw = getenv(name) else { return false }
    let value = String(cString: raw)
    return !value.isEmpty && value != "0"
}
