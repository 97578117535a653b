import Dispatch
import EventBus

struct Tap: Event {}
