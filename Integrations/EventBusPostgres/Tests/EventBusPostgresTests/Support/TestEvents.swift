import EventBus
import Foundation

/// The test traffic: who sent it and its number in the sender's series.
struct Ping: Event, Codable, Equatable {
    let from: String
    let n: Int
}

/// An event with a routing key, to check that keys survive the trip.
struct RoomMessage: Event, Codable, Equatable {
    let room: String
    let text: String
    var eventType: String { room }
}

/// An event whose size the test controls.
struct Blob: Event, Codable, Equatable {
    let text: String
}
