// Enqueued delivery throughput: events published from the benchmark thread and delivered on a
// serial queue, on the main actor, or through an async sequence, to one subscriber. A run publishes
// its events and waits until the last has been handled, so the time is per event, end to end.
//
// Names: "atQueue_<contender>", "main-actor_<contender>", "async_<contender>".

import Dispatch
import EventBus
import Foundation
import OpenCombine
import OpenCombineDispatch

/// Foundation's typed message for asynchronous observers.
struct TickAsyncMessage: NotificationCenter.AsyncMessage {
    typealias Subject = MessageSubject
    let value: Int
}

/// A workload that publishes `operations` events with `publish` and waits for the last delivery
/// (the enqueued scenarios' and the actor ones').
func enqueued(_ countdown: Countdown, finish: @escaping () -> Void = {}, _ publish: @escaping (Int) -> Void)
    -> Workload
{
    Workload(finish: finish) { operations in
        guard operations > 0 else { return }
        countdown.arm(operations)
        for i in 0..<operations { publish(i) }
        countdown.wait()
    }
}

func enqueuedScenarios() -> [Scenario] {
    [
        // MARK: atQueue: one serial DispatchQueue

        Scenario("atQueue DispatchQueue.async") {
            let queue = DispatchQueue(label: "consumer")
            let sink = Sink()
            let countdown = Countdown()
            return enqueued(countdown) { i in
                queue.async {
                    sink.take(i)
                    countdown.tick()
                }
            }
        },
        Scenario("atQueue EventBus") {
            let bus = EventBus()
            let sink = Sink()
            let countdown = Countdown()
            _ = bus.on(Tick.self).atQueue(DispatchQueue(label: "consumer")).next { event in
                sink.take(event.value)
                countdown.tick()
            }
            return enqueued(countdown) { i in bus.dispatch(Tick(value: i)) }
        },
        // The context hook's cost (issue 31): a propagator set, with no context to carry (one lock
        // and a capture per delivery), and with one (the capture kept, restored on the queue).
        Scenario("atQueue EventBus-propagator") {
            let countdown = Countdown()
            let bus = propagatingBus(countdown)
            return enqueued(countdown) { i in bus.dispatch(Tick(value: i)) }
        },
        Scenario("atQueue EventBus-propagator-context") {
            let countdown = Countdown()
            let bus = propagatingBus(countdown)
            return Workload { operations in
                guard operations > 0 else { return }
                countdown.arm(operations)
                BenchmarkContext.$current.withValue(1) {
                    for i in 0..<operations { bus.dispatch(Tick(value: i)) }
                }
                countdown.wait()
            }
        },
        Scenario("atQueue OpenCombine") {
            let subject = PassthroughSubject<Tick, Never>()
            let sink = Sink()
            let countdown = Countdown()
            let cancellable = subject.receive(on: DispatchQueue(label: "consumer").ocombine).sink { event in
                sink.take(event.value)
                countdown.tick()
            }
            return enqueued(countdown, finish: { cancellable.cancel() }) { i in subject.send(Tick(value: i)) }
        },

        // MARK: main actor, published from a background thread

        Scenario("main-actor DispatchQueue.main.async") {
            let sink = Sink()
            let countdown = Countdown()
            return enqueued(countdown) { i in
                DispatchQueue.main.async {
                    sink.take(i)
                    countdown.tick()
                }
            }
        },
        Scenario("main-actor EventBus") {
            let bus = EventBus()
            let sink = Sink()
            let countdown = Countdown()
            _ = bus.on(Tick.self).onMainActor().next { event in
                sink.take(event.value)
                countdown.tick()
            }
            return enqueued(countdown) { i in bus.dispatch(Tick(value: i)) }
        },
        Scenario("main-actor Task") {
            let sink = Sink()
            let countdown = Countdown()
            return enqueued(countdown) { i in
                Task { @MainActor in
                    sink.take(i)
                    countdown.tick()
                }
            }
        },

        // MARK: async sequences and asynchronous observers

        Scenario("async AsyncStream") {
            let (stream, continuation) = AsyncStream<Tick>.makeStream()
            let sink = Sink()
            let countdown = Countdown()
            Task {
                for await event in stream {
                    sink.take(event.value)
                    countdown.tick()
                }
            }
            return enqueued(countdown, finish: { continuation.finish() }) { i in continuation.yield(Tick(value: i)) }
        },
        Scenario("async EventBus-events") {
            let bus = EventBus()
            let stream = bus.events(of: Tick.self)
            let sink = Sink()
            let countdown = Countdown()
            let consumer = Task {
                for await event in stream {
                    sink.take(event.value)
                    countdown.tick()
                }
            }
            return enqueued(countdown, finish: { consumer.cancel() }) { i in bus.dispatch(Tick(value: i)) }
        },
        // Foundation's `AsyncMessage`: `post` returns at once; the time runs until the observer ran
        // for every message (observers run as tasks, possibly at once: the countdown locks).
        Scenario("async AsyncMessage") {
            let center = NotificationCenter()
            let subject = MessageSubject()
            let countdown = LockedCountdown()
            let token = center.addObserver(of: subject, for: TickAsyncMessage.self) { message in
                consume(message.value)
                countdown.tick()
            }
            return Workload(finish: { center.removeObserver(token) }) { operations in
                guard operations > 0 else { return }
                countdown.arm(operations)
                for i in 0..<operations { center.post(TickAsyncMessage(value: i), subject: subject) }
                countdown.wait()
            }
        },
    ]
}

/// The context of the propagator scenarios: a task-local, as a tracing library's is.
enum BenchmarkContext {
    @TaskLocal static var current: Int?
}

/// A bus with a propagator of `BenchmarkContext` and one `atQueue` subscriber, the one of
/// "atQueue EventBus", that ticks `countdown`.
private func propagatingBus(_ countdown: Countdown) -> EventBus {
    let bus = EventBus()
    bus.contextPropagator = TaskLocalContextPropagator(BenchmarkContext.$current)
    let sink = Sink()
    _ = bus.on(Tick.self).atQueue(DispatchQueue(label: "consumer")).next { event in
        sink.take(event.value)
        countdown.tick()
    }
    return bus
}
