internal import EventBusRemote
internal import Foundation

/// Event envelopes as a bridge writes them (version 3, no MAC), numbered from 1 for one origin,
/// with an ordering key when asked: only the header matters to a store (the ordering hash).
struct ConformanceEnvelopes {
    let origin = UUID()
    var sequence: UInt64 = 0

    /// The next envelope, keyed `key` if given (ordered by its origin otherwise).
    mutating func next(key: String? = nil) -> String {
        sequence += 1
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let keyMember = key.map { #","k":""# + $0 + #"""# } ?? ""
        return #"{"v":3,"o":""# + origin.uuidString + #"","s":\#(sequence),"n":"conformance.event""# + keyMember
            + #","ts":\#(now),"p":{"n":\#(sequence)}}"#
    }

    /// `count` envelopes.
    mutating func next(_ count: Int, key: String? = nil) -> [String] {
        (0..<count).map { _ in next(key: key) }
    }

    /// A key whose events belong to partition `index` of `count` (the first such `k<i>`).
    static func key(inPartition index: Int, of count: Int) -> String {
        let partition = DurablePartition(group: "conformance", index: index, count: count)
        var probe = ConformanceEnvelopes()
        for candidate in 0... {
            let key = "k\(candidate)"
            if partition.contains(hash: RemoteBridge.orderingHash(ofEnvelope: probe.next(key: key))) { return key }
        }
        fatalError("unreachable")
    }
}
