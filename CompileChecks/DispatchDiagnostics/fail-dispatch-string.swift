// MUST NOT COMPILE, with the Event diagnostic: a String is not an event. Expected, exactly:
// "instance method 'dispatch' requires that 'String' conform to 'Event'", not the bridge's overload
// speaking of Notification: "cannot convert value of type 'String' to expected argument type
// 'Notification'".
import EventBus
import EventBusFoundation

func send(bus: EventBus) {
    bus.dispatch("hello")  // expected-error
}
