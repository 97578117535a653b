import EventBus

struct Tap: Event {}

@MainActor final class Model {
    var count = 0
}
