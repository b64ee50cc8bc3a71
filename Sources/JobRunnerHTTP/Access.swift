import Foundation
import Hummingbird

/// Who may use the dashboard: with a token, a request carries it (`Authorization: Bearer`) or
/// the cookie `POST /login` sets; form posts carry the CSRF token of the pages.
struct Access: Sendable {
    /// The token every request needs; nil: none (loopback only).
    let token: String?
    /// The value of the login cookie: random, for this process's life.
    let session: String
    /// The CSRF token the pages put in their forms: random, for this process's life.
    let csrf: String

    static let cookieName = "jobrunner_session"

    init(token: String?) {
        self.token = token
        session = Self.randomToken()
        csrf = Self.randomToken()
    }

    /// 32 random bytes in hex.
    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }
            .joined()
    }

    /// Whether `request` may be answered.
    func allows(_ request: Request) -> Bool {
        guard let token else { return true }
        if let header = request.headers[.authorization], header.hasPrefix("Bearer "),
            Self.same(String(header.dropFirst("Bearer ".count)), token)
        {
            return true
        }
        if let cookie = request.cookies[Self.cookieName], Self.same(cookie.value, session) { return true }
        return false
    }

    /// Compares in time that depends on the lengths only, never on where the texts differ.
    static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        var difference = UInt8(x.count == y.count ? 0 : 1)
        for index in 0..<max(x.count, y.count) {
            difference |= (index < x.count ? x[index] : 0) ^ (index < y.count ? y[index] : 0)
        }
        return difference == 0
    }

    /// The cookie a good login sets.
    var cookie: Cookie {
        Cookie(name: Self.cookieName, value: session, path: "/", httpOnly: true, sameSite: .strict)
    }

    /// The login form (`GET /login`): a page of its own, no script, styled as the others (the
    /// assets are served without the token: they hold no data).
    static func loginPage(failed: Bool) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
        <title>jobrunner: sign in</title><link rel="stylesheet" href="/assets/app.css">
        <link rel="icon" href="/assets/favicon.svg" type="image/svg+xml"></head>
        <body><header class="top"><span class="brand">jobrunner</span></header>
        <main id="main" class="login"><h1>Sign in</h1>
        <p>This dashboard needs its token (the one in <code>--http-token-file</code> or
        <code>$JOBRUNNER_HTTP_TOKEN</code>).</p>
        \(failed ? "<p class=\"notice error\" role=\"alert\">That token is not this dashboard's.</p>" : "")
        <form method="post" action="/login" class="login">
        <label for="token">Token</label>
        <input id="token" name="token" type="password" autocomplete="current-password" required>
        <button type="submit">Sign in</button>
        </form></main></body></html>
        """
    }
}
