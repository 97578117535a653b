public import EventBus

// `EventBus.JSONValue` and its siblings, from when JSON events were part of the `EventBus` module
// (which needed nested aliases: the module and its main class share a name). In their own module
// they have a qualified name that works as it is, `EventBusJSON.JSONValue`: these aliases only
// keep old code compiling, with a warning that says what to write. A message, not `renamed:`:
// that fix-it would replace the member name alone and write `EventBus.EventBusJSON.JSONValue`.

extension EventBus {
    /// The ``JSONValue`` type under its old qualified name; spell it `EventBusJSON.JSONValue`.
    ///
    /// ```swift
    /// let payload: EventBusJSON.JSONValue = ["count": 3]
    /// ```
    @available(*, deprecated, message: "in the EventBusJSON module now: write EventBusJSON.JSONValue")
    public typealias JSONValue = EventBusJSON.JSONValue

    /// The ``JSONObject`` type under its old qualified name; spell it `EventBusJSON.JSONObject`.
    ///
    /// ```swift
    /// let members: EventBusJSON.JSONObject = ["ok": true]
    /// ```
    @available(*, deprecated, message: "in the EventBusJSON module now: write EventBusJSON.JSONObject")
    public typealias JSONObject = EventBusJSON.JSONObject

    /// The ``JSONArray`` type under its old qualified name; spell it `EventBusJSON.JSONArray`.
    ///
    /// ```swift
    /// let elements: EventBusJSON.JSONArray = [1, 2]
    /// ```
    @available(*, deprecated, message: "in the EventBusJSON module now: write EventBusJSON.JSONArray")
    public typealias JSONArray = EventBusJSON.JSONArray

    /// The ``JSONEvent`` type under its old qualified name; spell it `EventBusJSON.JSONEvent`.
    ///
    /// ```swift
    /// EventBus.shared.dispatch(EventBusJSON.JSONEvent(id: "cart.updated"))
    /// ```
    @available(*, deprecated, message: "in the EventBusJSON module now: write EventBusJSON.JSONEvent")
    public typealias JSONEvent = EventBusJSON.JSONEvent
}
