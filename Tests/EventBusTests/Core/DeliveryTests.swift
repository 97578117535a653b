import Dispatch
import Testing

@testable import EventBus
@testable import EventBusFoundation

@Suite("Delivery: synchronous, queued, bus queue, main queue", .offThePool)
struct DeliveryTests {
    @Test("A subscriber without a queue runs on the dispatching thread, before dispatch returns")
    func synchronousDelivery() {
        let bus = EventBus()
        let marker = DispatchSpecificKey<Int>()
        let queue = DispatchQueue(label: "dispatcher")
        queue.setSpecific(key: marker, value: 7)
        let seen = Shared<[Int?]>([])
        _ = bus.on(Ping.self).next { _ in seen.withLock { $0.append(DispatchQueue.getSpecific(key: marker)) } }

        queue.sync {
            bus.dispatch(Ping())
            #expect(seen.value == [7], "handler ran before dispatch returned, on the dispatcher's queue")
        }
    }

    @Test("atQueue delivers asynchronously on the queue, in dispatch order")
    func queuedDeliveryInOrder() {
        let bus = EventBus()
        let queue = DispatchQueue(label: "subscriber")
        let marker = DispatchSpecificKey<Int>()
        queue.setSpecific(key: marker, value: 1)
        let received = Shared<[Int]>([])
        let onQueue = Shared<Bool>(true)
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }  // hold the queue so delivery must be asynchronous

        _ = bus.on(Ping.self).atQueue(queue).next { event in
            if DispatchQueue.getSpecific(key: marker) != 1 { onQueue.withLock { $0 = false } }
            received.withLock { $0.append(event.value) }
        }
        for value in 0..<1_000 { bus.dispatch(Ping(value: value)) }
        #expect(received.value.isEmpty, "nothing is delivered synchronously")

        gate.signal()
        #expect(drain(queue))
        #expect(received.value == Array(0..<1_000))
        #expect(onQueue.value)
    }

    @Test("dispatchOnBusQueue dispatches asynchronously, preserving call order")
    func busQueueOrder() {
        let bus = EventBus()
        let received = Shared<[Int]>([])
        _ = bus.on(Ping.self).next { event in received.withLock { $0.append(event.value) } }

        for value in 0..<500 { bus.dispatchOnBusQueue(Ping(value: value)) }

        #expect(waitUntil { received.value.count == 500 })
        #expect(received.value == Array(0..<500))
    }

    @Test("dispatchOnMain runs synchronously on the main queue and enqueues from elsewhere")
    func dispatchOnMain() async {
        // `swift test` services the main queue (on Linux from a pool thread, after dispatchMain):
        // MainActor.run gets us onto it, and the enqueued case is awaited with a timeout.
        let bus = EventBus()
        let log = Shared<[String]>([])
        _ = bus.on(Ping.self).next { event in log.append("\(event.value) main=\(isOnMainQueue)") }

        await MainActor.run {
            bus.dispatchOnMain(Ping(value: 1))
            log.append("returned")
        }
        #expect(log.value == ["1 main=true", "returned"])

        let enqueued = onAnotherThread {
            bus.dispatchOnMain(Ping(value: 2))
            log.append("background returned")
        }
        #expect(enqueued)
        #expect(await waitUntil { log.value.count == 4 })
        #expect(
            Set(log.value.suffix(2)) == ["background returned", "2 main=true"], "enqueued, then run on the main queue")
    }
}
