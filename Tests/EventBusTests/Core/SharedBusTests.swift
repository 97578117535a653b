import Foundation
import Testing

@testable import EventBus
@testable import EventBusFoundation

/// The only suite that touches `EventBus.shared`; serialized so its assertions see only itself.
@Suite("EventBus.shared and subscribe(_:)", .serialized, .offThePool)
struct SharedBusTests {
    struct SharedOnly: Event { let text: String }

    @Test("subscribe(_:) is EventBus.shared.on(_:).freeWith(self)")
    func subscribeUsesSharedBus() {
        let log = Shared<[String]>([])
        var screen: Screen? = Screen("shared", log: log)
        screen!.subscribe(SharedOnly.self).next { owner, event in owner.log.append(event.text) }
        #expect(EventBus.shared.subscriptionCount(of: SharedOnly.self) == 1)

        EventBus.shared.dispatch(SharedOnly(text: "hello"))
        screen = nil
        EventBus.shared.dispatch(SharedOnly(text: "gone"))

        #expect(log.value == ["hello"])
        #expect(EventBus.shared.subscriptionCount(of: SharedOnly.self) == 0)
    }

    @Test("the shared bus bridges with NotificationCenter.default (buses made with init() do not)")
    func sharedBusUsesTheDefaultCenter() {
        #expect(EventBus.shared.notificationCenter === NotificationCenter.default)
        #expect(EventBus().notificationCenter !== NotificationCenter.default)
    }
}
