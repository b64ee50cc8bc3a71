import JobRunnerCore

/// What a form's action said, kept by the server for the page the browser is sent back to:
/// the address carries only a random id (`?notice=ID`), so no text from an address is ever shown
/// as the server's own words, and a refusal is known for one.
final class Notices: Sendable {
    /// One action's words.
    struct Notice: Sendable {
        var text: String
        /// A refusal or a failure: shown as an error.
        var isError: Bool
    }

    /// How many are kept (the oldest go first): enough for the pages a few people have open.
    static let capacity = 256

    private let kept = Locked<[(id: String, notice: Notice)]>([])

    /// Keeps `notice`: the id to put in the address.
    func put(_ notice: Notice) -> String {
        let id = (0..<2).map { _ in String(UInt64.random(in: .min ... .max), radix: 16) }.joined()
        kept.withLock {
            $0.append((id, notice))
            if $0.count > Self.capacity { $0.removeFirst($0.count - Self.capacity) }
        }
        return id
    }

    /// The notice an address names; nil for one never made here (or long gone).
    func notice(_ id: String) -> Notice? {
        kept.withLock { $0.last(where: { $0.id == id })?.notice }
    }
}
