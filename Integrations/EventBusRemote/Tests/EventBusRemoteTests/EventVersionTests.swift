import Crypto
import EventBus
import EventBusRemote
import Foundation
import Testing

/// Version 1 of "test.order": what older instances publish and read.
struct OrderV1: Event, Codable, Equatable {
    let id: Int
}

/// Version 2 of "test.order": a field was added.
struct Order: Event, Codable, Equatable {
    let id: Int
    let carrier: String
}

extension RemoteBridge.Upcaster where E == Order {
    /// Version 1 read as an `Order` with an unknown carrier, and written back without it.
    static let fromV1 = Self.from(
        OrderV1.self, version: 1, upcast: { Order(id: $0.id, carrier: "unknown") },
        downcast: { OrderV1(id: $0.id) })
}

@Suite("Event versions and envelopes one step forward: upcast, published older, held from a store, never misread")
struct EventVersionTests {
    /// A node that registers `Order` as version 2 of "test.order", reading version 1, publishing `published`.
    static func upgraded(_ name: String, on network: InMemoryNetwork, publishing published: Int? = nil) async throws
        -> (Node, Recorded<Order>)
    {
        let node = try await Node(name, on: network)
        node.bridge.register(Order.self, as: "test.order", version: 2, upcasting: [.fromV1], publishing: published)
        return (node, Recorded(Order.self, on: node.bus))
    }

    /// A node that registers `OrderV1` as "test.order" (version 1, as before versions existed).
    static func old(_ name: String, on network: InMemoryNetwork) async throws -> (Node, Recorded<OrderV1>) {
        let node = try await Node(name, on: network)
        node.bridge.register(OrderV1.self, as: "test.order")
        return (node, Recorded(OrderV1.self, on: node.bus))
    }

    @Test("version 1 from an old instance is upcast and dispatched as today's type; version 2 is written as name@2")
    func upcast() async throws {
        let network = InMemoryNetwork()
        let (old, _) = try await Self.old("old", on: network)
        let (new, orders) = try await Self.upgraded("new", on: network)
        let (other, otherOrders) = try await Self.upgraded("other", on: network)
        try await old.bridge.publish(OrderV1(id: 1))
        try await new.bridge.publish(Order(id: 2, carrier: "ups"))
        #expect(await orders.wait { $0.count == 2 })
        #expect(Set(orders.events.map(\.id)) == [1, 2] && orders.events.contains(Order(id: 1, carrier: "unknown")))
        #expect(await otherOrders.wait { Set($0.map(\.id)) == [1, 2] })
        #expect(otherOrders.events.contains(Order(id: 2, carrier: "ups")))
        #expect(network.sent.contains { $0.contains(#""n":"test.order@2""#) })
        #expect(network.sent.contains { $0.contains(#""n":"test.order","#) })
        #expect(new.issues.events.isEmpty && other.issues.events.isEmpty, "\(new.issues.events) \(other.issues.events)")
    }

    @Test(
        "a newer version than an instance registers is reported as undecodable (unreadable version), never decoded as the old type"
    )
    func newerIsNotMisread() async throws {
        let network = InMemoryNetwork()
        let (old, oldOrders) = try await Self.old("old", on: network)
        let (new, _) = try await Self.upgraded("new", on: network)
        try await new.bridge.publish(Order(id: 7, carrier: "dhl"))
        #expect(await old.issues.wait { !$0.isEmpty })
        guard case .undecodablePayload("test.order@2", _, let error) = old.issues.events.first else {
            Issue.record("expected undecodablePayload, got \(old.issues.events)")
            return
        }
        #expect("\(error)".contains("version 2 of \"test.order\" is newer than this instance reads (1)"), "\(error)")
        #expect(oldOrders.events.isEmpty)
    }

    @Test("step 1 of the deploy protocol: an upgraded instance publishing version 1 is read by old and new alike")
    func publishingTheOldVersion() async throws {
        let network = InMemoryNetwork()
        let (old, oldOrders) = try await Self.old("old", on: network)
        let (new, _) = try await Self.upgraded("new", on: network, publishing: 1)
        let (peer, peerOrders) = try await Self.upgraded("peer", on: network)
        try await new.bridge.publish(Order(id: 3, carrier: "ups"))
        #expect(await oldOrders.wait { $0 == [OrderV1(id: 3)] })
        #expect(await peerOrders.wait { $0 == [Order(id: 3, carrier: "unknown")] })
        #expect(old.issues.events.isEmpty && peer.issues.events.isEmpty, "\(old.issues.events) \(peer.issues.events)")
        #expect(!network.sent.contains { $0.contains("test.order@") })
    }

    @Test("registrations that cannot work are refused and reported, the type staying as it was")
    func refusedRegistrations() async throws {
        let network = InMemoryNetwork()
        let node = try await Node("a", on: network)
        let withoutDowncast = RemoteBridge.Upcaster<Order>.from(
            OrderV1.self, version: 1, upcast: { Order(id: $0.id, carrier: "?") })
        let tooNew = RemoteBridge.Upcaster<Order>.from(
            OrderV1.self, version: 2, upcast: { Order(id: $0.id, carrier: "?") })
        node.bridge.register(Order.self, as: "test.order", version: 2, upcasting: [withoutDowncast], publishing: 1)
        node.bridge.register(Order.self, as: "test.order", version: 2, upcasting: [tooNew])
        node.bridge.register(Order.self, as: "test.order", version: 0)
        node.bridge.register(Order.self, as: "test.order@2")
        node.bridge.register(Order.self, as: "test.order", version: 2)
        node.bridge.register(Order.self, as: "test.order", version: 3)
        #expect(await node.issues.wait { $0.count == 5 })
        let reasons = node.issues.events.compactMap { issue -> String? in
            if case .registrationRefused(_, let reason) = issue { reason } else { nil }
        }
        #expect(reasons.count == 5, "\(node.issues.events)")
        #expect(reasons[0].contains("needs an upcaster of that version with a downcast"), "\(reasons)")
        #expect(reasons[1].contains("must be below 2"), "\(reasons)")
        #expect(reasons[2].contains("1 to 999,999,999"), "\(reasons)")
        #expect(reasons[3].contains("only letters"), "\(reasons)")
        #expect(reasons[4].contains(#"already registered as "test.order@2""#), "\(reasons)")
    }

    @Test(
        "from a store: delivery stops at the first payload the instance cannot decode, which is held, not recorded, not reported"
    )
    func heldFromStore() async throws {
        let network = InMemoryNetwork()
        let (old, oldOrders) = try await Self.old("old", on: network)
        let origin = UUID()
        let payloads = [
            envelope(origin: origin, sequence: 1, name: "test.order", payload: #"{"id":1}"#),
            envelope(origin: origin, sequence: 2, name: "test.other", payload: #"{"id":2}"#),  // not for it: handled
            envelope(origin: origin, sequence: 3, name: "test.order@2", payload: #"{"carrier":"x","id":3}"#),
            envelope(origin: origin, sequence: 4, name: "test.order", payload: #"{"id":4}"#),
        ]
        let batch = await old.bridge.inbox.deliverAndWait(payloads)
        #expect(batch.handled == 2)
        #expect(batch.held?.contains("version 2 of \"test.order\" is newer") == true, "\(batch)")
        #expect(oldOrders.events == [OrderV1(id: 1)])
        // Held again when read again: nothing was recorded, so it is no duplicate either.
        let again = await old.bridge.inbox.deliverAndWait(Array(payloads[2...]))
        #expect(again.handled == 0 && again.held != nil)
        // A payload that does not decode as the registered type is held too.
        let garbled = await old.bridge.inbox.deliverAndWait([
            envelope(origin: UUID(), sequence: 1, name: "test.order", payload: #"{"identifier":1}"#)
        ])
        #expect(garbled.handled == 0 && garbled.held?.contains("did not decode") == true, "\(garbled)")
        try await Task.sleep(for: .milliseconds(50))
        #expect(
            old.issues.events.map(\.description) == [
                BridgeIssue.unknownWireName("test.other", origin: origin).description
            ])
        // An instance that reads version 2 takes the rest in order, each once.
        let (new, orders) = try await Self.upgraded("new", on: network)
        let rest = await new.bridge.inbox.deliverAndWait(Array(payloads[2...]))
        #expect(rest == RemoteInbox.StoredBatch(handled: 2, held: nil))
        #expect(orders.events == [Order(id: 3, carrier: "x"), Order(id: 4, carrier: "unknown")])
    }

    @Test(
        "one step forward: a version 4 envelope (a member this version does not know) is read; version 5 is held from a store"
    )
    func envelopeOneStepForward() async throws {
        let network = InMemoryNetwork()
        let node = try await Node("a", on: network)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let origin = UUID().uuidString
        let v4 =
            #"{"v":4,"o":"\#(origin)","s":1,"n":"test.ping.v1","ts":\#(now),"future":{"x":1},"p":{"from":"x","n":1}}"#
        network.inject(v4)
        #expect(await node.pings.wait { $0 == [Ping(from: "x", n: 1)] })
        let v5 = #"{"v":5,"o":"\#(origin)","s":2,"n":"test.ping.v1","ts":\#(now),"p":{"from":"x","n":2}}"#
        let batch = await node.bridge.inbox.deliverAndWait([v5])
        #expect(batch.handled == 0 && batch.held?.contains("envelope version 5 is newer") == true, "\(batch)")
        #expect(node.issues.events.isEmpty, "\(node.issues.events)")
        #expect(node.pings.events.count == 1)
    }

    @Test("with a key, a version 4 envelope signed with its version's MAC context is read, and an altered one refused")
    func signedOneStepForward() async throws {
        let network = InMemoryNetwork()
        let a = try await Node("a", on: network, key: key(9))
        let b = try await Node("b", on: network, key: key(9))
        try await a.publish(1)
        #expect(await b.waitFor(a, 1))
        // A v4 envelope is a v3 one with more members: re-sign a's second envelope as version 4.
        let signed = try a.bridge.transactionalEnvelope(for: Ping(from: "a", n: 2))
        let v3 = String(signed[..<signed.range(of: #","m":""#)!.lowerBound]) + "}"
        let v4 = v3.replacingOccurrences(of: #"{"v":3,"#, with: #"{"v":4,"#)
            .replacingOccurrences(of: #","p":"#, with: #","extra":true,"p":"#)
        // Signed over version 3's context: the stated version is under the MAC, so it is refused.
        network.inject(Self.sign(v4, version: 3, channel: network.channel, key: key(9)))
        #expect(await b.issues.wait { !$0.isEmpty })
        guard case .unauthenticated = b.issues.events.first else {
            Issue.record("expected unauthenticated, got \(b.issues.events)")
            return
        }
        network.inject(Self.sign(v4, version: 4, channel: network.channel, key: key(9)))
        #expect(await b.waitFor(a, 2))
        #expect(b.issues.events.count == 1, "\(b.issues.events)")
    }

    @Test("the README's event-versions example is ReadmeEventVersions.swift verbatim, and does what the README says")
    func readmeExample() async throws {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let readme = try String(contentsOf: directory.appending(path: "../../README.md"), encoding: .utf8)
        let example = try String(contentsOf: directory.appending(path: "ReadmeEventVersions.swift"), encoding: .utf8)
        let section = try #require(readme.range(of: "## Event versions"))
        let start = try #require(readme.range(of: "```swift\n", range: section.upperBound..<readme.endIndex))
        let end = try #require(readme.range(of: "```\n", range: start.upperBound..<readme.endIndex))
        #expect(String(readme[start.upperBound..<end.lowerBound]) == example)
        let network = InMemoryNetwork()
        let (a, b) = (try await Node("a", on: network), try await Node("b", on: network))
        registerOrderShipped(on: a.bridge)
        registerOrderShipped(on: b.bridge)
        let shipped = Recorded(OrderShipped.self, on: b.bus)
        let id = UUID()
        try await a.bridge.publish(OrderShipped(orderID: id, carrier: "ups"))
        #expect(await shipped.wait { $0.count == 1 })
        #expect(shipped.events.first?.carrier == nil && shipped.events.first?.orderID == id)
        #expect(network.sent.contains { $0.contains(#""n":"order.shipped","#) && !$0.contains("carrier") })
        withExtendedLifetime((a, b)) {}
    }

    /// `text` (an unsigned envelope) with a MAC as `Authenticator` makes it for `version`.
    static func sign(_ text: String, version: Int, channel: String, key: Data) -> String {
        let context = "eventbus.v\(version):\(channel.utf8.count):\(channel):"
        let code = HMAC<SHA256>.authenticationCode(for: Data((context + text).utf8), using: SymmetricKey(data: key))
        let mac = code.map { String(format: "%02x", $0) }.joined()
        return String(text.dropLast()) + #","m":""# + mac + #""}"#
    }
}
