extension RemoteBridge {
    /// What a partitioning transport orders an envelope by: the event's key (its JSON text, quotes
    /// included) when it has one, otherwise its origin (the publishing bridge's UUID); `nil` for a
    /// text that is not an event envelope (a heartbeat, or a foreign payload).
    ///
    /// Two envelopes with the same ordering key must reach a consumer in publish order; envelopes
    /// with different ones may be handled in parallel. An event without a key is thereby ordered per
    /// publisher, the order a receiver of a single bridge already gets. A durable transport with
    /// consumer groups hashes this text into a partition. Pure, reads only the envelope's first
    /// members (no JSON decoding, no authentication: the transport's own envelopes): O(length of
    /// the header). Thread-safe.
    ///
    /// ```swift
    /// // {"v":3,"o":"…","s":7,"n":"order.shipped.v1","k":"order-42",…}
    /// let key = RemoteBridge.orderingKey(ofEnvelope: envelope)   // "\"order-42\""
    /// ```
    public static func orderingKey(ofEnvelope envelope: String) -> String? {
        Envelope.orderingKey(envelope)
    }

    /// The hash of `envelope`'s ordering key (``orderingKey(ofEnvelope:)``; the empty text when it
    /// has none), 0 to 2^31 - 1: 32-bit FNV-1a of its UTF-8 bytes, the top bit cleared. A durable
    /// store keeps it with the event, so it is fixed forever: every version computes it so, and a
    /// group's partition is this hash modulo the group's number of partitions. Pure, thread-safe.
    ///
    /// ```swift
    /// let partition = Int(RemoteBridge.orderingHash(ofEnvelope: envelope)) % 16
    /// ```
    public static func orderingHash(ofEnvelope envelope: String) -> Int32 {
        var hash: UInt32 = 2_166_136_261
        for byte in (orderingKey(ofEnvelope: envelope) ?? "").utf8 {
            hash = (hash ^ UInt32(byte)) &* 16_777_619
        }
        return Int32(bitPattern: hash & 0x7FFF_FFFF)
    }
}

extension Envelope {
    /// The text ``RemoteBridge/orderingKey(ofEnvelope:)`` returns: `k`'s JSON string if present,
    /// else `o`. Relies on the order ``event(_:sequence:format:signer:now:)`` writes the members in
    /// (`v`, `o`, `s`, `n`, then `k` if any), which every version keeps.
    static func orderingKey(_ envelope: String) -> String? {
        let bytes = Array(envelope.utf8.prefix(4_096))
        guard let originStart = bytes.index(after: #","o":""#), originStart + 36 <= bytes.count,
            bytes[originStart + 36] == UInt8(ascii: "\"")
        else { return nil }
        let origin = String(decoding: bytes[originStart..<originStart + 36], as: UTF8.self)
        // The wire name is validated ASCII without quotes: its closing quote ends it.
        guard let nameStart = bytes.index(after: #","n":""#, from: originStart + 37),
            let nameEnd = bytes[nameStart...].firstIndex(of: UInt8(ascii: "\""))
        else { return nil }
        let keyMark = Array(#","k":""#.utf8)
        guard bytes[(nameEnd + 1)...].starts(with: keyMark) else { return origin }
        // A JSON string: up to the first quote not escaped by a backslash.
        var index = nameEnd + keyMark.count + 1
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""): return String(decoding: bytes[(nameEnd + keyMark.count)...index], as: UTF8.self)
            default: index += 1
            }
        }
        return nil
    }
}

extension Array where Element == UInt8 {
    /// The index just after the first occurrence of `marker`'s UTF-8 bytes at or after `start`.
    fileprivate func index(after marker: String, from start: Int = 0) -> Int? {
        let needle = Array(marker.utf8)
        guard start + needle.count <= count else { return nil }
        for index in start...(count - needle.count) where self[index..<index + needle.count].elementsEqual(needle) {
            return index + needle.count
        }
        return nil
    }
}
