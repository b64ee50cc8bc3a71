import Foundation
import Testing

@testable import JobRunnerHTTP

/// `--http [ADDR:]PORT`, the token rule, the token comparison and the `Range` header.
@Suite struct SettingsTests {
    @Test func aBarePortBindsLoopback() throws {
        let (host, port) = try DashboardSettings.address("8080")
        #expect(host == "127.0.0.1")
        #expect(port == 8080)
        #expect(try DashboardSettings.address("0.0.0.0:9") == ("0.0.0.0", 9))
        #expect(try DashboardSettings.address("[::1]:7") == ("::1", 7))
    }

    @Test func badAddressesSaySo() {
        for text in ["", "http", ":80", "host:", "1.2.3.4:70000", "-1"] {
            #expect(throws: DashboardSettingsError.self, "\(text)") { try DashboardSettings.address(text) }
        }
    }

    @Test func aNonLoopbackAddressNeedsAToken() throws {
        #expect(throws: DashboardSettingsError.self) {
            try DashboardSettings(host: "0.0.0.0", port: 80, token: nil, readOnly: false).check()
        }
        try DashboardSettings(host: "0.0.0.0", port: 80, token: "t", readOnly: false).check()
        try DashboardSettings(host: "127.0.0.1", port: 80, token: nil, readOnly: false).check()
        try DashboardSettings(host: "localhost", port: 80, token: nil, readOnly: false).check()
    }

    @Test func tokensCompare() {
        #expect(Access.same("abc", "abc"))
        #expect(!Access.same("abc", "abd"))
        #expect(!Access.same("abc", "abcd"))
        #expect(!Access.same("", "a"))
    }

    @Test func rangesResolveAgainstTheSize() {
        #expect(LogFile.resolve(nil, size: 10) == .whole)
        #expect(LogFile.resolve("bytes=2-", size: 10) == .range(2...9))
        #expect(LogFile.resolve("bytes=2-4", size: 10) == .range(2...4))
        #expect(LogFile.resolve("bytes=2-400", size: 10) == .range(2...9))
        #expect(LogFile.resolve("bytes=-3", size: 10) == .range(7...9))
        #expect(LogFile.resolve("bytes=10-", size: 10) == .unsatisfiable)
        #expect(LogFile.resolve("bytes=0-", size: 0) == .unsatisfiable)
        #expect(LogFile.resolve("bytes=1-2,4-5", size: 10) == .whole)
        #expect(LogFile.resolve("lines=1-2", size: 10) == .whole)
    }

    @Test func formsGoBackToTheirOwnPagesOnly() {
        #expect(DashboardResponder.returnPath("/runs/1", message: "ok") == "/runs/1?message=ok")
        #expect(DashboardResponder.returnPath("//evil.example/x", message: "a b").hasPrefix("/?message="))
        #expect(DashboardResponder.returnPath("https://evil.example", message: "") == "/?message=")
        #expect(DashboardResponder.returnPath("/runs?job=a", message: "x&y") == "/runs?job=a&message=x%26y")
    }
}
