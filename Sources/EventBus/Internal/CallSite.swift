/// Where a subscription was made: `#fileID` and `#line` of its `next` or `handle` call, recorded at
/// no cost to the call (static strings, no allocation).
struct CallSite: Sendable, CustomStringConvertible {
    let fileID: StaticString
    let line: UInt

    /// `Module/File.swift:42`.
    var description: String { "\(fileID):\(line)" }
}
