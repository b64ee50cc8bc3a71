import Foundation
import JobRunnerCore
import JobRunnerPages

/// A store holding runs built by hand, and the read model over it, for rendering pages.
struct PageFixture {
    let store = InMemoryQueueStore()
    let logs: String
    var model: ReadModel { ReadModel(store: store, lock: nil, logs: LogLocation(stateDirectory: logs)) }
    /// A fixed moment the pages are rendered for.
    static let now = Date(timeIntervalSince1970: 1_795_000_000)

    init() throws {
        logs =
            FileManager.default.temporaryDirectory.appendingPathComponent("pages-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: logs + "/logs", withIntermediateDirectories: true)
    }

    func commit(_ changes: [StoreChange]) async throws {
        let claim = try await store.claim(owner: "test")
        try await store.commit(changes, under: claim)
    }

    /// Writes an attempt's log where the read model looks for it.
    func writeLog(run: String, job: String, attempt: Int, _ bytes: [UInt8]) throws {
        let path = LogLayout.attemptLog(in: logs + "/logs", runID: run, jobID: job, attempt: attempt)
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    static func settings(readOnly: Bool = false, live: Bool = true) -> PageSettings {
        PageSettings(csrfToken: readOnly ? nil : "tok-123", readOnly: readOnly, live: live, now: now)
    }
}
