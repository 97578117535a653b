// MUST COMPILE: events are dispatched, notifications posted (or dispatched as NotificationEvent).
import EventBus
import EventBusFoundation
import Foundation

func send(bus: EventBus) {
    bus.dispatch(Ping())
    bus.post(Notification(name: Notification.Name("n")))
    bus.dispatch(NotificationEvent(name: Notification.Name("n")))
}
