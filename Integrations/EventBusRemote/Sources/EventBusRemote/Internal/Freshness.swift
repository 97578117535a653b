import Foundation

/// The freshness limits a receiver applies, with a key, to version 3 envelopes it receives live:
/// a pure decision over the publisher's signed clock, the receiver's clock and when the receiver's
/// listening period began (see `RemoteBridge.Configuration.maximumClockSkew`).
struct Freshness: Sendable {
    /// How far apart two instances' wall clocks may be.
    let skew: Duration
    /// The oldest envelope taken live.
    let maximumAge: Duration
    /// How long an envelope may wait in its publisher's queue, signed, before it is sent (the
    /// publish timeout).
    let queued: Duration

    /// Why an envelope signed at `signedAt` (milliseconds since 1970, the publisher's clock) is
    /// stale for a receiver at `now` listening since `listeningSince`, or `nil` if it is fresh.
    func staleness(signedAt: Int64, now: Date, listeningSince: Date?) -> String? {
        let now = Envelope.milliseconds(now)
        let skew = Self.milliseconds(skew)
        if signedAt > now + skew {
            return "signed \(signedAt - now) ms in this receiver's future, beyond the clock skew tolerated (\(skew) ms)"
        }
        let oldest = Self.milliseconds(maximumAge) + skew
        if now - signedAt > oldest {
            return "signed \(now - signedAt) ms ago, longer than maximumEnvelopeAge plus the clock skew (\(oldest) ms)"
        }
        if let listeningSince {
            let since = Envelope.milliseconds(listeningSince)
            let tolerance = skew + Self.milliseconds(queued)
            if since - signedAt > tolerance {
                return "signed \(since - signedAt) ms before this receiver began listening, more than the clock skew "
                    + "plus the publish timeout (\(tolerance) ms): published while it was not listening"
            }
        }
        return nil
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
