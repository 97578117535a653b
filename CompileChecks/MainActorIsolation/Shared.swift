// Declarations shared by every compile check in this directory (type-checked with each one).
import EventBus

struct ProfileRenamed: Event {
    let name: String
}

/// Main-actor state, as a UIKit view controller or a SwiftUI view model holds it.
@MainActor
final class ProfileViewModel: EventSubscribing {
    var title = ""
}
