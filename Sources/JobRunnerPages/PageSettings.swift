import Foundation

/// How a page is rendered for one request: the server decides, the pages obey.
public struct PageSettings: Sendable {
    /// Put in every form as the hidden field `csrf`; nil with ``readOnly``.
    public var csrfToken: String?
    /// No action buttons or forms at all (`--http-read-only`).
    public var readOnly: Bool
    /// Whether the page loads `/assets/app.js`, which updates it live over SSE and follows logs.
    public var live: Bool
    /// The moment the page is rendered for: "3 min ago", next dates, a running bar's end.
    public var now: Date
    /// A notice to show at the top of the page: what an action said, which the server kept for
    /// the page it redirected to (shown escaped, a line each). nil: none.
    public var message: String?
    /// The action was refused or failed: the notice is shown as an error.
    public var messageIsError = false

    public init(csrfToken: String?, readOnly: Bool, live: Bool, now: Date) {
        self.csrfToken = csrfToken
        self.readOnly = readOnly
        self.live = live
        self.now = now
    }

    /// Whether pages show action forms: not read-only, and a token to put in them.
    var actions: Bool { !readOnly && csrfToken != nil }
}
