import Foundation
import Testing

@testable import EventBusRemote

@Suite("The receiving and sending records, without threads")
struct StateTests {
    /// The parsed form of `text`, which must be an event envelope.
    static func received(_ text: String) throws -> Envelope.Received {
        guard
            case .event(let envelope) = Envelope.parse(
                text, maximumBytes: 7_999, verifier: nil, channel: "", acceptsPrevious: true)
        else {
            throw ParseFailure()
        }
        return envelope
    }

    struct ParseFailure: Error {}

    @Test("every publish a full buffer admits before any echo comes back is still known as this instance's own")
    func sentLogCoversTheBuffer() throws {
        let capacity = 10_000
        let publisher = SerialPublisher(capacity: capacity, maximumBytes: 7_999)
        let origin = UUID()
        var envelopes: [String] = []
        for n in 1...capacity {
            let fields = Envelope.EventFields(
                origin: origin, wireName: "test.ping.v1", keyJSON: nil, transactional: false,
                payload: #"{"from":"a","n":\#(n)}"#)
            guard
                case .admitted = publisher.admit(
                    wireName: "test.ping.v1",
                    build: { sequence in
                        let text = Envelope.event(
                            fields, sequence: sequence, format: Envelope.Format(version: 3, channel: ""), signer: nil)
                        envelopes.append(text)
                        return text
                    })
            else {
                Issue.record("publish \(n) was refused")
                return
            }
        }
        var echoes: [SentLog.Echo: Int] = [:]
        for text in envelopes { echoes[publisher.echo(of: try Self.received(text)), default: 0] += 1 }
        print("sent log: \(capacity) publishes admitted before their echoes, echoes \(echoes)")
        #expect(echoes == [.first: capacity])
        #expect(publisher.echo(of: try Self.received(envelopes[0])) == .again)
    }

    @Test(
        "the duplicate window: a repeat, a conflicting repeat, a replay older than the window and a gap, one verdict each"
    )
    func receiveHistory() throws {
        var history = ReceiveHistory(window: 4)
        let origin = UUID()
        func envelope(_ sequence: UInt64, _ n: Int = 0) throws -> Envelope.Received {
            try StateTests.received(
                #"{"v":2,"o":"\#(origin.uuidString)","s":\#(sequence),"n":"x","p":{"n":\#(n)}}"#)
        }
        #expect(history.admit(try envelope(1)) == .deliver(missed: 0))
        #expect(history.admit(try envelope(1)) == .duplicate(sameEnvelope: true))
        #expect(history.admit(try envelope(1, 9)) == .duplicate(sameEnvelope: false))
        #expect(history.admit(try envelope(5)) == .deliver(missed: 3))
        #expect(history.admit(try envelope(1)) == .older(highest: 5))
        #expect(history.admit(try envelope(6)) == .deliver(missed: 0))
        history.hasBeenInterrupted = true
        let stranger = try StateTests.received(#"{"v":2,"o":"\#(UUID().uuidString)","s":7,"n":"x","p":{}}"#)
        #expect(history.admit(stranger) == .deliver(missed: nil))
    }

    @Test(
        "freshness: in the future beyond the skew, older than the age limit, or signed before listening began (beyond the tolerance): stale; otherwise fresh"
    )
    func freshness() {
        let rule = Freshness(skew: .seconds(2), maximumAge: .seconds(300), queued: .seconds(5))
        let now = Date(timeIntervalSince1970: 1_000_000)
        let at = { (offset: Double) in Envelope.milliseconds(now.addingTimeInterval(offset)) }
        let since = now.addingTimeInterval(-60)
        #expect(rule.staleness(signedAt: at(0), now: now, listeningSince: since) == nil)
        #expect(rule.staleness(signedAt: at(1.9), now: now, listeningSince: since) == nil)
        #expect(rule.staleness(signedAt: at(2.1), now: now, listeningSince: since)?.contains("future") == true)
        #expect(
            rule.staleness(signedAt: at(-303), now: now, listeningSince: nil)?.contains("maximumEnvelopeAge") == true)
        #expect(rule.staleness(signedAt: at(-301), now: now, listeningSince: nil) == nil)
        // The age limit is 300 s plus the skew. Listening since 60 s ago: tolerated up to 7 s (skew + publish timeout) before that.
        #expect(rule.staleness(signedAt: at(-66.9), now: now, listeningSince: since) == nil)
        #expect(
            rule.staleness(signedAt: at(-67.1), now: now, listeningSince: since)?.contains("before this receiver")
                == true)
    }
}
