import ClusterSupport
import EventBusPostgres
import Logging
import PostgresNIO
import Testing

extension PostgresBridgeTests {
    @Suite("Payload limit: 7,999 bytes pass, 8,000 are refused before sending")
    struct PayloadLimitTests {
        /// The envelope's size around a Blob's text, measured from the refusal of a too-large one.
        static func overhead(of bridge: PostgresEventBridge) async throws -> Int {
            let text = String(repeating: "x", count: 8_000)
            do {
                try await bridge.publish(Blob(text: text))
            } catch RemoteBridgeError.payloadTooLarge(let bytes, _) {
                return bytes - 8_000
            }
            Issue.record("an 8,000-character blob was not refused")
            return 0
        }

        @Test(
            "an envelope of exactly 7,999 bytes is delivered; one of 8,000 is refused, reported, and delivered nowhere")
        func boundary() async throws {
            try await PostgresBridgeTests.withNodes(["a", "b"]) { nodes in
                let (a, b) = (nodes[0], nodes[1])
                let atA = Recorder(Blob.self, on: a.bus)
                let atB = Recorder(Blob.self, on: b.bus)
                let overhead = try await Self.overhead(of: a.bridge)
                #expect(overhead > 50 && overhead < 200)
                #expect(await a.issues.wait(forCount: 1))

                let fits = String(repeating: "x", count: PostgresEventBridge.maximumPayloadBytes - overhead)
                try await a.bridge.publish(Blob(text: fits))
                #expect(await atB.wait(forCount: 1))
                #expect(atB.events.first?.text.utf8.count == fits.utf8.count)

                let over = fits + "x"
                await #expect(throws: RemoteBridgeError.self) { try await a.bridge.publish(Blob(text: over)) }
                do {
                    try await a.bridge.publish(Blob(text: over))
                } catch RemoteBridgeError.payloadTooLarge(let bytes, _) {
                    #expect(bytes == 8_000)
                }
                #expect(await a.issues.wait(forCount: 3))
                #expect(
                    a.issues.events.allSatisfy {
                        if case .payloadTooLarge(let name, _) = $0 { name == "test.blob.v1" } else { false }
                    })
                try await a.bridge.publish(Blob(text: "marker"))
                #expect(await atB.wait(forCount: 2))
                #expect(atB.events.map(\.text.count) == [fits.count, 6])
                #expect(atA.events.map(\.text.count) == [fits.count, 6], "a refused publish is not dispatched locally")
            }
        }

        @Test("the limit counts UTF-8 bytes: fewer characters than the limit, but more bytes, are refused")
        func multibyte() async throws {
            try await PostgresBridgeTests.withNodes(["a", "b"]) { nodes in
                let (a, b) = (nodes[0], nodes[1])
                let atB = Recorder(Blob.self, on: b.bus)
                let overhead = try await Self.overhead(of: a.bridge)
                let room = PostgresEventBridge.maximumPayloadBytes - overhead
                // "é" is 2 bytes, "🚚" 4: half as many (a quarter as many) characters fit.
                let twoByte = String(repeating: "é", count: room / 2)
                let fourByte = String(repeating: "🚚", count: room / 4)
                try await a.bridge.publish(Blob(text: twoByte))
                try await a.bridge.publish(Blob(text: fourByte))
                #expect(await atB.wait(forCount: 2))
                #expect(atB.events.map(\.text) == [twoByte, fourByte], "multibyte text arrives intact")

                let tooMany = twoByte + "é"  // room / 2 + 1 characters, far fewer than 7,999
                #expect(tooMany.count < 4_100)
                await #expect(throws: RemoteBridgeError.self) { try await a.bridge.publish(Blob(text: tooMany)) }
                await #expect(throws: RemoteBridgeError.self) {
                    try await a.bridge.publish(Blob(text: fourByte + "🚚"))
                }
            }
        }

        @Test("the server itself rejects a NOTIFY payload of 8,000 bytes and accepts 7,999 (the constant is right)")
        func serverLimit() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            try await PostgresBridgeTests.rawNotify(String(repeating: "x", count: 7_999), on: channel)
            await #expect(throws: (any Error).self) {
                try await PostgresBridgeTests.rawNotify(String(repeating: "x", count: 8_000), on: channel)
            }
        }
    }
}
