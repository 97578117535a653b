import Testing

@testable import EventBus  // `PageSet`, internal

/// The set of slot pages with room, without a bus: its lowest member agrees
/// with a `Set`'s as it grows through several levels of words.
@Suite("PageSet: the lowest page with room, in levels of 64", .offThePool)
struct PageSetTests {
    @Test("random insertions and removals of pages up to 300,000 (four levels) agree with a Set's minimum")
    func agreesWithSet() {
        var pages = PageSet()
        var model = Set<Int>()
        var random = SplitMix64(seed: 5)
        #expect(pages.first == nil)
        var bound = 64
        for step in 0..<200_000 {
            if step % 20_000 == 0 { bound = min(bound * 4, 300_000) }
            let page = random.next(below: bound)
            if random.next(below: 3) == 0 {
                pages.remove(page)
                model.remove(page)
            } else {
                pages.insert(page)
                model.insert(page)
            }
            if step % 997 == 0 { #expect(pages.first == model.min()) }
        }
        // Emptied from the lowest up, as new subscriptions fill the lowest pages.
        for lowest in model.sorted() {
            #expect(pages.first == lowest)
            pages.remove(lowest)
        }
        #expect(pages.first == nil)
        pages.insert(299_999)
        #expect(pages.first == 299_999)
    }
}
