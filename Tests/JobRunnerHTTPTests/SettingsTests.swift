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

    /// Read-only without a token said anyone could "act on its jobs"; 0.0.0.0 printed
    /// `http://0.0.0.0:PORT/`, which no browser opens.
    @Test func theWordsFitWhatIsExposedAndWhereItListens() throws {
        let readOnly = DashboardSettings(host: "192.0.2.2", port: 0, token: nil, readOnly: true)
        #expect(throws: DashboardSettingsError.self) { try readOnly.check() }
        do {
            try readOnly.check()
        } catch {
            #expect(error.description.contains("read its jobs' outputs and logs"), "\(error)")
            #expect(!error.description.contains("act on"), "\(error)")
        }
        #expect(
            Dashboard.listeningWords(host: "0.0.0.0", port: 8080, hostname: "box")
                == "http://127.0.0.1:8080/, listening on port 8080 of every address of this machine (http://box:8080/ from elsewhere)"
        )
        #expect(
            Dashboard.listeningWords(host: "::", port: 80, hostname: nil).hasPrefix(
                "http://[::1]:80/, listening on port 80"))
        #expect(Dashboard.listeningWords(host: "::1", port: 80, hostname: "box") == "http://[::1]:80/")
        #expect(
            Dashboard.listeningWords(host: "127.0.0.1", port: 80, hostname: "box") == "http://127.0.0.1:80/")
    }

    @Test func formsGoBackToTheirOwnPagesOnly() {
        #expect(DashboardResponder.returnPath("/runs/1", notice: "ab12") == "/runs/1?notice=ab12")
        #expect(DashboardResponder.returnPath("//evil.example/x", notice: "ab12") == "/?notice=ab12")
        #expect(DashboardResponder.returnPath("https://evil.example", notice: "ab12") == "/?notice=ab12")
        #expect(DashboardResponder.returnPath("/runs?job=a", notice: "ab12") == "/runs?job=a&notice=ab12")
    }
}
