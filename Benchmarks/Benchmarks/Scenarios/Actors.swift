// Actor-isolated delivery: events published from the benchmark thread and handled on an actor,
// one subscriber. A run publishes its events and waits until the actor handled the last, so the
// time is per event, end to end (as in Enqueued.swift).
//
// Contenders: EventBus's `isolated(to:)` (in dispatch order); `events(of:)` consumed by a task that
// awaits the actor per event (in order: one consumer); and a `Task` per event that awaits the actor
// (the naive spelling: no order between events, shown for its cost).
//
// Names: "actor_<contender>".

import EventBus

/// The actor every contender delivers to: the handler body is the shared sink. The off-thread
/// scenarios (OffThread.swift) deliver to it too, and hold it with `hold(_:)`.
actor Consumer {
    let sink = Sink()
    let countdown: Countdown

    init(_ countdown: Countdown) { self.countdown = countdown }

    func take(_ value: Int) {
        sink.take(value)
        countdown.tick()
    }

    /// Keeps the actor busy until `gate` opens, so that what is sent to it waits (a backlog).
    /// Blocks one thread of the cooperative pool meanwhile.
    func hold(_ gate: Gate) { gate.block() }
}

func actorScenarios() -> [Scenario] {
    [
        Scenario("actor EventBus-isolated") {
            let bus = EventBus()
            let countdown = Countdown()
            let consumer = Consumer(countdown)
            _ = bus.on(Tick.self).isolated(to: consumer).next { consumer, event in consumer.take(event.value) }
            return enqueued(countdown, finish: { withExtendedLifetime(consumer) {} }) { i in
                bus.dispatch(Tick(value: i))
            }
        },
        Scenario("actor EventBus-events") {
            let bus = EventBus()
            let countdown = Countdown()
            let consumer = Consumer(countdown)
            let stream = bus.events(of: Tick.self)
            let task = Task {
                for await event in stream { await consumer.take(event.value) }
            }
            return enqueued(countdown, finish: { task.cancel() }) { i in bus.dispatch(Tick(value: i)) }
        },
        Scenario("actor Task-per-event") {
            let countdown = Countdown()
            let consumer = Consumer(countdown)
            return enqueued(countdown) { i in
                Task { await consumer.take(i) }
            }
        },
    ]
}
