import Dispatch
import Foundation
import Testing

@testable import EventBus

// Where the tests run, so that they never take the cooperative pool from the work they wait for.
//
// Swift Testing runs a synchronous test function, and the non-isolated part of an async one, on
// the cooperative pool: as many threads as cores (2 in CI). Actor drains, the actors' own jobs and
// streams' consuming tasks run there too. A test that blocks its thread (a semaphore wait, a
// polling loop, a join on other threads) or keeps it busy for seconds holds one of those two
// threads; two such tests at once left the actors of a third test with no thread at all: in CI's
// AddressSanitizer stage, three *Actors as owners* tests waited 136 s for their deliveries and
// failed.
//
// So every suite carries ``Testing/Trait/offThePool``: its tests run on threads of their own
// (Dispatch's overcommit pool, which starts a thread when none is free), and the cooperative pool
// is left to the library's work and to the tasks the tests start. ``requireOffThePool(_:)`` checks
// it, in every blocking helper of the suite.

/// A task executor that runs each job on a thread outside the cooperative pool: a serial queue of
/// its own per job, which Dispatch runs on its overcommit pool (a thread is started when none is
/// idle, so a job that blocks never delays another).
final class OffThePoolExecutor: TaskExecutor {
    static let shared = OffThePoolExecutor()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        DispatchQueue(label: "EventBusTests.offThePool").async { job.runSynchronously(on: executor) }
    }
}

/// Admits at most `width` tests at a time into ``OffThePoolTrait``'s threads. The cooperative pool
/// used to cap how many synchronous tests ran at once (at its width); off it, nothing would, and
/// the whole suite would start at once: hundreds of threads sharing 2 cores, each test's own
/// timeouts measured against them. A test waiting for admission suspends (it holds no thread).
final class TestAdmission: Sendable {
    private struct State {
        var free: Int
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Shared<State>
    let width: Int

    init(width: Int) {
        self.width = width
        state = Shared(State(free: width))
    }

    /// 2 tests per core (most of them wait more than they compute), or `EVENTBUS_TEST_WIDTH`.
    static let shared: TestAdmission = {
        let configured = getenv("EVENTBUS_TEST_WIDTH").flatMap { Int(String(cString: $0)) }
        return TestAdmission(width: max(1, configured ?? 2 * ProcessInfo.processInfo.activeProcessorCount))
    }()

    func enter() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let admitted = state.withLock { state in
                guard state.free > 0 else {
                    state.waiting.append(continuation)
                    return false
                }
                state.free -= 1
                return true
            }
            if admitted { continuation.resume() }
        }
    }

    func leave() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}

/// Runs each test of the suite it is given to (nested suites included) on ``OffThePoolExecutor``,
/// at most ``TestAdmission/width`` at a time. A synchronous test's body runs there, and so does
/// an async test's up to its first hop to an actor and after each return from one; the tasks a
/// test starts with `Task {}` or `Task.detached {}` do not inherit it (they run on the pool, like
/// the library's), its child tasks (`async let`, task groups) do.
struct OffThePoolTrait: SuiteTrait, TestTrait, TestScoping {
    @TaskLocal static var isApplied = false

    var isRecursive: Bool { true }

    func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        // Each test case (a run of a test function); not the suite as a whole.
        testCase == nil ? nil : self
    }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // Given to a suite and to one nested in it: applied once.
        guard !Self.isApplied else { return try await function() }
        await TestAdmission.shared.enter()
        defer { TestAdmission.shared.leave() }
        try await Self.$isApplied.withValue(true) {
            try await withTaskExecutorPreference(OffThePoolExecutor.shared) { try await function() }
        }
    }
}

extension Trait where Self == OffThePoolTrait {
    /// The suite's tests run on threads of their own, never on the cooperative pool (see
    /// ``OffThePoolTrait``). Every suite of this module has it.
    static var offThePool: Self { OffThePoolTrait() }
}

/// Records an issue if the calling thread is one of the cooperative pool's: `what` blocks, and a
/// blocked pool thread is one the actors and tasks that tests wait for cannot have. Every helper of
/// the suite that blocks its thread calls it.
///
/// On Linux the pool is Dispatch's non-overcommit root queues (`com.apple.root.default-qos` and
/// siblings); their threads' names end in `-qos` (the kernel keeps the last 15 characters),
/// those of the overcommit pool in `.overcommit`, the main queue's and a `Thread`'s in neither.
/// Elsewhere the check is off.
func requireOffThePool(_ what: @autoclosure () -> String, sourceLocation: SourceLocation = #_sourceLocation) {
    #if os(Linux)
        guard let name = currentThreadName(), name.hasSuffix("-qos") else { return }
        Issue.record(
            "\(what()) blocks a thread of the cooperative pool (\(name)): run it off the pool (see OffThePool.swift)",
            sourceLocation: sourceLocation)
    #endif
}

#if os(Linux)
    /// The calling thread's name as the kernel keeps it, or `nil` if it cannot be read.
    private func currentThreadName() -> String? {
        guard let file = fopen("/proc/thread-self/comm", "r") else { return nil }
        defer { fclose(file) }
        var bytes = [UInt8](repeating: 0, count: 32)
        let count = fread(&bytes, 1, bytes.count - 1, file)
        var name = String(decoding: bytes[..<count], as: UTF8.self)
        while name.last == "\n" { name.removeLast() }
        return name
    }
#endif
