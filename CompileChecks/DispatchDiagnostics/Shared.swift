// Declarations shared by every compile check in this directory (type-checked with each one).
import EventBus
import EventBusFoundation
import Foundation

struct Ping: Event {}
