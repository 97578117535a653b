/// Answerers' sequence numbers: registration order across a node's answerers (which all sit at the
/// same level of its registry, so they are asked in this order).
enum AnswerSequence {
    private static let counter = Locked<UInt64>(0)

    static func next() -> UInt64 {
        counter.withLock { value in
            value += 1
            return value
        }
    }
}
