// MUST NOT COMPILE: here `Event` is the app's struct, not the bus's protocol (which is why the
// qualified spelling of pass-qualified-names.swift must work).
import EventBus

struct Ping: Event {}  // expected-error
