/// Where a subscription was made: `#fileID` and `#line` of its `next` or `handle` call, recorded at
/// no cost to the call (static strings, no allocation).
@usableFromInline
struct CallSite: Sendable, CustomStringConvertible {
    @usableFromInline let fileID: StaticString
    @usableFromInline let line: UInt

    @inlinable
    init(fileID: StaticString, line: UInt) {
        self.fileID = fileID
        self.line = line
    }

    /// `Module/File.swift:42`.
    @usableFromInline var description: String { "\(fileID):\(line)" }
}
