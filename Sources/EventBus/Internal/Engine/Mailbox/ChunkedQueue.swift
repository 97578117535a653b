/// A FIFO of noncopyable elements in fixed-size chunks, for a mailbox's pending deliveries: O(1)
/// to append at either end and to take from the front, no reallocation ever (a backlog grows by
/// whole chunks), and the memory comes back as it drains (an empty chunk is freed at once, but for
/// one kept for the next chunk the queue needs).
///
/// Not thread-safe: its owner guards it (a mailbox's lock).
final class ChunkedQueue<Element: ~Copyable> {
    /// A chunk's elements are those in `start..<end` of `base`.
    private final class Chunk {
        let base: UnsafeMutablePointer<Element>
        var start = 0
        var end = 0
        var next: Chunk?

        init(capacity: Int) {
            base = .allocate(capacity: capacity)
        }

        deinit {
            (base + start).deinitialize(count: end - start)
            base.deallocate()
        }
    }

    /// Elements per chunk: about 4 KiB of them, at least 16 (computed once: in unspecialized
    /// generic code, the element's layout is read at run time).
    private let chunkCapacity = max(16, 4096 / max(1, MemoryLayout<Element>.stride))

    private var head: Chunk?
    private var tail: Chunk?
    /// An empty chunk kept for the next one needed, so that a queue oscillating around a chunk's
    /// boundary does not allocate each time.
    private var spare: Chunk?
    private(set) var count = 0

    init() {}

    var isEmpty: Bool { count == 0 }

    /// Appends `element` at the back.
    func append(_ element: consuming Element) {
        if let tail, tail.end < chunkCapacity {
            (tail.base + tail.end).initialize(to: element)
            tail.end += 1
        } else {
            let chunk = takeChunk(startingAt: 0)
            chunk.base.initialize(to: element)
            chunk.end = 1
            if let tail { tail.next = chunk } else { head = chunk }
            tail = chunk
        }
        count += 1
    }

    /// Puts `element` at the front (before every element in the queue).
    func prepend(_ element: consuming Element) {
        if let head, head.start > 0 {
            head.start -= 1
            (head.base + head.start).initialize(to: element)
        } else {
            let capacity = chunkCapacity
            let chunk = takeChunk(startingAt: capacity)
            chunk.start = capacity - 1
            (chunk.base + chunk.start).initialize(to: element)
            chunk.next = head
            if head == nil { tail = chunk }
            head = chunk
        }
        count += 1
    }

    /// Removes and returns the front element, `nil` if there is none.
    func popFirst() -> Element? {
        guard let head else { return nil }
        let element = (head.base + head.start).move()
        head.start += 1
        count -= 1
        if head.start == head.end { retire(head) }
        return element
    }

    /// Moves the front element to `destination` (uninitialized memory); the queue must not be
    /// empty. Unlike ``popFirst()``, it names no `Optional` of the element: in unspecialized generic
    /// code, that would look its type up at run time on every call.
    func moveFirst(to destination: UnsafeMutablePointer<Element>) {
        let head = head.unsafelyUnwrapped
        destination.moveInitialize(from: head.base + head.start, count: 1)
        head.start += 1
        count -= 1
        if head.start == head.end { retire(head) }
    }

    /// Destroys the front element; the queue must not be empty.
    func removeFirst() {
        let head = head.unsafelyUnwrapped
        (head.base + head.start).deinitialize(count: 1)
        head.start += 1
        count -= 1
        if head.start == head.end { retire(head) }
    }

    /// Calls `body` with the front element, in place; `nil` without calling it when there is none.
    func withFirst<R>(_ body: (inout Element) -> R) -> R? {
        guard let head else { return nil }
        return body(&(head.base + head.start).pointee)
    }

    /// Calls `body` with the back element, in place.
    func withLast<R>(_ body: (inout Element) -> R) -> R? {
        guard let tail else { return nil }
        return body(&(tail.base + tail.end - 1).pointee)
    }

    /// Takes the emptied front chunk out of the list, and keeps it as the spare or frees it.
    private func retire(_ chunk: Chunk) {
        head = chunk.next
        if head == nil { tail = nil }
        chunk.next = nil
        chunk.start = 0
        chunk.end = 0
        if spare == nil { spare = chunk }
    }

    /// The spare chunk, or a new one, empty at `index`.
    private func takeChunk(startingAt index: Int) -> Chunk {
        let chunk = spare ?? Chunk(capacity: chunkCapacity)
        spare = nil
        chunk.start = index
        chunk.end = index
        return chunk
    }

    deinit {
        // Unlinked one by one: a long list released from its head would recurse once per chunk.
        var chunk = head
        head = nil
        tail = nil
        while let current = chunk {
            chunk = current.next
            current.next = nil
        }
    }
}
