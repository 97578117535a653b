// Declarations shared by every compile check in this directory (type-checked with each one).
import EventBus

struct ProfileRenamed: Event {
    let name: String
    var eventType: String { name }  // a key, so that the checks may use ofType
}

/// Main-actor state, as a UIKit view controller or a SwiftUI view model holds it.
@MainActor
final class ProfileViewModel: EventSubscribing {
    var title = ""
}
